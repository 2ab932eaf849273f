//! Errors and operand accessors of the SPIR-V loader (every decode error is
//! [`EmuError::Malformed`] unless it names an unsupported feature).

use super::*;

pub(super) fn e(msg: impl Into<String>) -> EmuError {
    EmuError::Malformed(msg.into())
}

pub(super) fn op_id(o: Option<&Operand>) -> Result<u32, EmuError> {
    match o {
        Some(Operand::IdRef(i))
        | Some(Operand::IdScope(i))
        | Some(Operand::IdMemorySemantics(i)) => Ok(*i),
        other => Err(e(format!("expected an id operand, got {other:?}"))),
    }
}

pub(super) fn op_lit(o: Option<&Operand>) -> Result<u64, EmuError> {
    match o {
        Some(Operand::LiteralBit32(v)) => Ok(*v as u64),
        Some(Operand::LiteralBit64(v)) => Ok(*v),
        Some(Operand::LiteralExtInstInteger(v)) => Ok(*v as u64),
        other => Err(e(format!("expected a literal operand, got {other:?}"))),
    }
}
