//! The storage class of every pointer value of a parsed SPIR-V module, for the static
//! analyses over it ([`super::dataflow`], [`super::writes`]): each value's result type, and
//! each `OpTypePointer`'s storage class.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Op, StorageClass, Word};
use std::collections::HashMap;

/// Result types and pointer storage classes of one module.
pub(crate) struct PointerClasses {
    /// pointer type id → storage class
    ptr_class: HashMap<Word, StorageClass>,
    /// result id → result type id (every instruction and parameter with both)
    type_of: HashMap<Word, Word>,
}

impl PointerClasses {
    /// Reads the module's types, module-scope values, function parameters and instructions.
    pub(crate) fn of(m: &dr::Module) -> Self {
        let mut pc = Self {
            ptr_class: HashMap::new(),
            type_of: HashMap::new(),
        };
        for i in &m.types_global_values {
            if i.class.opcode == Op::TypePointer {
                if let (Some(id), Some(Operand::StorageClass(sc))) =
                    (i.result_id, i.operands.first())
                {
                    pc.ptr_class.insert(id, *sc);
                }
            }
        }
        let params = m.functions.iter().flat_map(|f| f.parameters.iter());
        let body = m
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()));
        for i in m.types_global_values.iter().chain(params).chain(body) {
            if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                pc.type_of.insert(id, t);
            }
        }
        pc
    }

    /// The storage class of value `id` when it is a pointer (`None` otherwise or unknown).
    pub(crate) fn class(&self, id: Word) -> Option<StorageClass> {
        self.type_of
            .get(&id)
            .and_then(|t| self.ptr_class.get(t))
            .copied()
    }
}
