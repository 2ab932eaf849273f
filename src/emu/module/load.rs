//! Module loading: the module-scope declarations (types, constants, variables), slot
//! allocation, the per-function decode and CFG (immediate post-dominators, `emu::cfg`),
//! and the kernels' descriptions.

use super::*;

/// Phi table: block label -> list of (phi result id, [(value id, pred label)]).
type PhiTable = HashMap<u32, Vec<(u32, Vec<(u32, u32)>)>>;

impl Module {
    /// Loads a parsed module, in phases: the module-scope declarations ([`declare_globals`]),
    /// function and block indices and slots ([`index_functions`]), each function's decode
    /// and post-dominators ([`decode_function`]), the reconvergence points of conditional
    /// branches ([`fill_reconvergence`]) and the kernels ([`describe_kernels`]).
    pub(super) fn from_dr(m: &dr::Module) -> Result<Module, EmuError> {
        let mut cx = new_ctx(m);
        declare_globals(&mut cx, m)?;
        let (fidx, bidx, nblocks, mut funcs) = index_functions(&mut cx, m)?;
        let mut code: Vec<Inst> = Vec::new();
        let mut class: Vec<u8> = Vec::new();
        let mut blocks = vec![
            BlockInfo {
                start: 0,
                ipdom: EXIT
            };
            nblocks as usize
        ];
        let mut phis: Vec<(u32, u32)> = Vec::new();
        // Phi table: block label -> list of (phi result id, [(value id, pred label)])
        let mut phi_tab: HashMap<u32, Vec<(u32, Vec<(u32, u32)>)>> = HashMap::new();
        for f in &m.functions {
            for b in &f.blocks {
                let l = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
                for i in &b.instructions {
                    if i.class.opcode == Op::Phi {
                        let mut inc = Vec::new();
                        for p in i.operands.chunks(2) {
                            inc.push((op_id(p.first())?, op_id(p.get(1))?));
                        }
                        phi_tab
                            .entry(l)
                            .or_default()
                            .push((i.result_id.unwrap_or(0), inc));
                    }
                }
            }
        }
        for (fi, f) in m.functions.iter().enumerate() {
            let mut st = FuncDecode {
                cx: &mut cx,
                code: &mut code,
                class: &mut class,
                blocks: &mut blocks,
                phis: &mut phis,
                phi_tab: &phi_tab,
                bidx: &bidx,
                fidx: &fidx,
            };
            decode_function(&mut st, &mut funcs, fi, f)?;
        }
        fill_reconvergence(&blocks, &mut code);
        let kernels = describe_kernels(&cx, m, &fidx, &bidx, &funcs, &blocks, &code)?;
        let issues = code.iter().map(Inst::issues).collect();
        Ok(Module {
            kernels,
            code,
            class,
            issues,
            blocks,
            funcs,
            phis,
            nslots: cx.nslots,
            consts: cx.consts,
            local_static: cx.local_static,
            private_size: cx.private_size,
            const_data: cx.const_data,
        })
    }
}

/// The decoder context, with the OpenCL.std import, decorations and names of `m`.
fn new_ctx(m: &dr::Module) -> Ctx {
    let mut cx = Ctx {
        types: HashMap::new(),
        slot: HashMap::new(),
        vty: HashMap::new(),
        nslots: 0,
        consts: Vec::new(),
        const_vals: HashMap::new(),
        builtin_vars: HashMap::new(),
        builtin_ptrs: HashMap::new(),
        decorations: HashMap::new(),
        names: HashMap::new(),
        local_static: 0,
        private_size: 0,
        const_data: Vec::new(),
        cl_ext: None,
    };
    for i in &m.ext_inst_imports {
        if let (Some(id), Some(Operand::LiteralString(s))) = (i.result_id, i.operands.first()) {
            if s == "OpenCL.std" {
                cx.cl_ext = Some(id);
            }
        }
    }
    for a in &m.annotations {
        if a.class.opcode == Op::Decorate {
            if let (Some(Operand::IdRef(t)), Some(Operand::Decoration(d))) =
                (a.operands.first(), a.operands.get(1))
            {
                cx.decorations
                    .entry(*t)
                    .or_default()
                    .push((*d, a.operands[2..].to_vec()));
            }
        }
    }
    for n in &m.debug_names {
        if n.class.opcode == Op::Name {
            if let (Some(Operand::IdRef(t)), Some(Operand::LiteralString(s))) =
                (n.operands.first(), n.operands.get(1))
            {
                cx.names.insert(*t, s.clone());
            }
        }
    }
    cx
}

/// Types, constants, module-scope variables.
fn declare_globals(cx: &mut Ctx, m: &dr::Module) -> Result<(), EmuError> {
    // Types, constants, module-scope variables.
    // A result id defined twice could make a type contain itself (a cycle that the
    // recursive size/leaf walks would follow until the stack overflows: found by
    // fuzz/fuzz_targets/spirv_load.rs); valid SPIR-V defines each id once.
    let mut defined = std::collections::HashSet::new();
    for i in &m.types_global_values {
        let rid = i.result_id.unwrap_or(0);
        if i.result_id.is_some() && !defined.insert(rid) {
            return Err(e(format!("result id %{rid} is defined twice")));
        }
        if !declare_type(cx, i, rid)? {
            declare_value(cx, i, rid)?;
        }
    }
    Ok(())
}

/// A type declaration: `Ok(false)` when `i` is not one.
fn declare_type(cx: &mut Ctx, i: &dr::Instruction, rid: u32) -> Result<bool, EmuError> {
    let ops = &i.operands;
    match i.class.opcode {
        Op::TypeVoid => {
            cx.types.insert(rid, Ty::Void);
        }
        Op::TypeBool => {
            cx.types.insert(rid, Ty::Bool);
        }
        Op::TypeInt => {
            cx.types.insert(rid, Ty::Int(op_lit(ops.first())? as u32));
        }
        Op::TypeFloat => {
            cx.types.insert(rid, Ty::Float(op_lit(ops.first())? as u32));
        }
        Op::TypeVector => {
            let el = op_id(ops.first())?;
            let n = op_lit(ops.get(1))? as u32;
            if !matches!(
                cx.types.get(&el),
                Some(Ty::Int(_) | Ty::Float(_) | Ty::Bool)
            ) || !(1..=16).contains(&n)
            {
                return Err(e("bad vector type"));
            }
            cx.types.insert(rid, Ty::Vector(el, n));
        }
        Op::TypeArray => {
            let el = op_id(ops.first())?;
            if !cx.types.contains_key(&el) {
                return Err(e("array of an undefined type"));
            }
            let len_id = op_id(ops.get(1))?;
            let len = cx
                .const_vals
                .get(&len_id)
                .and_then(|v| v.first().copied())
                .ok_or_else(|| e("array length is not a constant"))?;
            cx.types.insert(rid, Ty::Array(el, len));
        }
        Op::TypeStruct => {
            let mem: Result<Vec<u32>, _> = ops.iter().map(|o| op_id(Some(o))).collect();
            // Members must be defined before use (no cycles).
            if mem
                .as_ref()
                .is_ok_and(|m| m.iter().any(|t| !cx.types.contains_key(t)))
            {
                return Err(e("struct member of an undefined type"));
            }
            let packed = cx.deco(rid, Decoration::CPacked).is_some();
            cx.types.insert(rid, Ty::Struct(mem?, packed));
        }
        Op::TypePointer => {
            let sc = match ops.first() {
                Some(Operand::StorageClass(s)) => *s,
                _ => return Err(e("bad OpTypePointer")),
            };
            cx.types.insert(rid, Ty::Pointer(sc, op_id(ops.get(1))?));
        }
        Op::TypeFunction => {
            cx.types.insert(rid, Ty::Function);
        }
        Op::TypeImage | Op::TypeSampledImage => {
            cx.types.insert(rid, Ty::Opaque("images"));
        }
        Op::TypeSampler => {
            cx.types.insert(rid, Ty::Opaque("samplers"));
        }
        Op::TypePipe | Op::TypeReserveId | Op::TypePipeStorage => {
            cx.types.insert(rid, Ty::Opaque("pipes"));
        }
        Op::TypeQueue | Op::TypeDeviceEvent => {
            cx.types.insert(rid, Ty::Opaque("device-side enqueue"));
        }
        Op::TypeEvent => {
            cx.types.insert(rid, Ty::Int(64));
        }
        Op::TypeOpaque => {
            cx.types.insert(rid, Ty::Opaque("opaque types"));
        }
        Op::TypeForwardPointer => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// A module-scope constant or variable (anything else is unsupported).
fn declare_value(cx: &mut Ctx, i: &dr::Instruction, rid: u32) -> Result<(), EmuError> {
    let ops = &i.operands;
    match i.class.opcode {
        Op::Constant | Op::SpecConstant => {
            let ty = i.result_type.unwrap_or(0);
            let k = cx.scalar(ty)?;
            let v = op_lit(ops.first())? & int_mask(k.bits());
            let s = cx.alloc(rid, ty)?;
            cx.consts.push((s, v));
            cx.const_vals.insert(rid, vec![v]);
        }
        Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
            let ty = i.result_type.unwrap_or(0);
            let v = matches!(i.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue) as u64;
            let s = cx.alloc(rid, ty)?;
            cx.consts.push((s, v));
            cx.const_vals.insert(rid, vec![v]);
        }
        Op::ConstantNull | Op::Undef => {
            let ty = i.result_type.unwrap_or(0);
            let n = cx.nleaves(ty)?;
            let s = cx.alloc(rid, ty)?;
            for j in 0..n {
                cx.consts.push((s + j, 0));
            }
            cx.const_vals.insert(rid, vec![0; n as usize]);
        }
        Op::ConstantComposite | Op::SpecConstantComposite => {
            let ty = i.result_type.unwrap_or(0);
            let mut vals = Vec::new();
            for o in ops {
                let c = op_id(Some(o))?;
                vals.extend(
                    cx.const_vals
                        .get(&c)
                        .ok_or_else(|| e("composite of non-constants"))?
                        .iter()
                        .copied(),
                );
            }
            let s = cx.alloc(rid, ty)?;
            for (j, v) in vals.iter().enumerate() {
                cx.consts.push((s + j as u32, *v));
            }
            cx.const_vals.insert(rid, vals);
        }
        Op::ConstantSampler => {
            // Only image built-ins use samplers, and those are reported as
            // unsupported when a kernel reaches them.
            let ty = i.result_type.unwrap_or(0);
            let s = cx.alloc(rid, ty)?;
            cx.consts.push((s, 0));
            cx.const_vals.insert(rid, vec![0]);
        }
        Op::SpecConstantOp => {
            return Err(EmuError::Unsupported("OpSpecConstantOp".into()));
        }
        Op::Variable => declare_variable(cx, i, rid)?,
        Op::Line | Op::NoLine | Op::ExtInst => {}
        other => {
            return Err(EmuError::Unsupported(format!("module-scope {other:?}")));
        }
    }
    Ok(())
}

/// A module-scope `OpVariable`: a built-in (`Input`), `__local`, program-scope or private
/// variable.
fn declare_variable(cx: &mut Ctx, i: &dr::Instruction, rid: u32) -> Result<(), EmuError> {
    let ops = &i.operands;
    let pty = i.result_type.unwrap_or(0);
    let sc = match ops.first() {
        Some(Operand::StorageClass(s)) => *s,
        _ => return Err(e("bad OpVariable")),
    };
    let pointee = match cx.ty(pty)? {
        Ty::Pointer(_, p) => *p,
        _ => return Err(e("variable of non-pointer type")),
    };
    if sc == StorageClass::Input {
        let b = match cx.deco(rid, Decoration::BuiltIn).and_then(|o| o.first()) {
            Some(Operand::BuiltIn(b)) => *b,
            _ => {
                return Err(EmuError::Unsupported(
                    "Input variable without BuiltIn".into(),
                ))
            }
        };
        let bi = match b {
            BuiltIn::GlobalInvocationId => Bi::GlobalId,
            BuiltIn::LocalInvocationId => Bi::LocalId,
            BuiltIn::WorkgroupId => Bi::GroupId,
            BuiltIn::NumWorkgroups => Bi::NumGroups,
            BuiltIn::GlobalSize => Bi::GlobalSize,
            BuiltIn::WorkgroupSize => Bi::LocalSize,
            BuiltIn::EnqueuedWorkgroupSize => Bi::EnqueuedLocalSize,
            BuiltIn::GlobalOffset => Bi::GlobalOffset,
            BuiltIn::WorkDim => Bi::WorkDim,
            BuiltIn::LocalInvocationIndex => Bi::LocalIndex,
            BuiltIn::GlobalLinearId => Bi::GlobalLinearId,
            BuiltIn::SubgroupSize => Bi::SubgroupSize,
            BuiltIn::SubgroupMaxSize => Bi::SubgroupMaxSize,
            BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => Bi::NumSubgroups,
            BuiltIn::SubgroupId => Bi::SubgroupId,
            BuiltIn::SubgroupLocalInvocationId => Bi::SubgroupLocalId,
            other => return Err(EmuError::Unsupported(format!("built-in {other:?}"))),
        };
        cx.builtin_vars.insert(rid, bi);
        return Ok(());
    }
    let (size, align) = cx.size_align(pointee)?;
    let (tag, off) = match sc {
        StorageClass::Workgroup => {
            let off = align_up(cx.local_static, align.max(4));
            cx.local_static = off.saturating_add(size);
            (TAG_LOCAL, off)
        }
        StorageClass::CrossWorkgroup | StorageClass::UniformConstant => {
            let off = align_up(cx.const_data.len() as u64, align.max(8));
            let end = (off + size) as usize;
            if end > (64 << 20) {
                return Err(EmuError::Unsupported(
                    "program-scope data over 64 MiB".into(),
                ));
            }
            cx.const_data.resize(end, 0);
            if let Some(init) = ops.get(1) {
                let init = op_id(Some(init))?;
                let mut buf = vec![0u8; size as usize];
                cx.const_bytes(init, pointee, &mut buf)?;
                cx.const_data[off as usize..end].copy_from_slice(&buf);
            }
            (TAG_CONST, off)
        }
        StorageClass::Private | StorageClass::Function => {
            // Program-scope private variables: per work-item copy; we place
            // them in the private arena (initialisers unsupported).
            if ops.get(1).is_some() {
                return Err(EmuError::Unsupported("initialised private globals".into()));
            }
            let off = align_up(cx.private_size, align.max(8));
            cx.private_size = off.saturating_add(size);
            (TAG_PRIVATE, off)
        }
        other => return Err(EmuError::Unsupported(format!("storage class {other:?}"))),
    };
    let s = cx.alloc(rid, pty)?;
    let v = (tag << TAG_SHIFT) | off;
    cx.consts.push((s, v));
    cx.const_vals.insert(rid, vec![v]);
    Ok(())
}

/// Function ids → indices, block labels → global block indices (and their count), and
/// the slots of every function's parameters, result and values.
#[allow(clippy::type_complexity)]
fn index_functions(
    cx: &mut Ctx,
    m: &dr::Module,
) -> Result<(HashMap<u32, u32>, HashMap<u32, u32>, u32, Vec<FuncInfo>), EmuError> {
    // Function ids → indices; allocate parameter and result slots first.
    let mut fidx: HashMap<u32, u32> = HashMap::new();
    for (i, f) in m.functions.iter().enumerate() {
        let id = f
            .def
            .as_ref()
            .and_then(|d| d.result_id)
            .ok_or_else(|| e("function without id"))?;
        fidx.insert(id, i as u32);
    }
    let mut funcs = Vec::new();
    // Block indices.
    let mut bidx: HashMap<u32, u32> = HashMap::new();
    let mut nblocks = 0u32;
    for f in &m.functions {
        for b in &f.blocks {
            let l = b
                .label
                .as_ref()
                .and_then(|l| l.result_id)
                .ok_or_else(|| e("block without label"))?;
            // a label defined twice would map blocks of one function into another's
            // range (out-of-bounds index: fuzzer find)
            if bidx.insert(l, nblocks).is_some() {
                return Err(e(format!("block label %{l} is defined twice")));
            }
            nblocks += 1;
        }
    }
    // Allocate slots for every result id in functions (values are global in SPIR-V).
    for f in &m.functions {
        let def = f.def.as_ref().ok_or_else(|| e("function without def"))?;
        let rty = def.result_type.unwrap_or(0);
        let mut params = Vec::new();
        for p in &f.parameters {
            let (id, ty) = (p.result_id.unwrap_or(0), p.result_type.unwrap_or(0));
            let s = cx.alloc(id, ty)?;
            params.push((s, cx.n(id)?));
        }
        let ret = if matches!(cx.ty(rty)?, Ty::Void) {
            None
        } else {
            let n = cx.nleaves(rty)?.max(1);
            let s = cx.nslots;
            cx.nslots += n;
            Some((s, n))
        };
        funcs.push(FuncInfo {
            entry: 0,
            params,
            ret,
            callees: Vec::new(),
            unsupported: None,
            global_atomics: false,
            float_arithmetic: false,
            ndrange_reads: Default::default(),
        });
        for b in &f.blocks {
            for i in &b.instructions {
                if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                    if i.class.opcode == Op::Variable {
                        // Private variable: static offset in the private arena (no
                        // recursion in OpenCL C, so one frame per function suffices).
                        let pointee = match cx.ty(ty)? {
                            Ty::Pointer(_, p) => *p,
                            _ => return Err(e("variable of non-pointer type")),
                        };
                        let (size, align) = cx.size_align(pointee)?;
                        let off = align_up(cx.private_size, align.max(8));
                        cx.private_size = off.saturating_add(size);
                        let s = cx.alloc(id, ty)?;
                        cx.consts.push((s, (TAG_PRIVATE << TAG_SHIFT) | off));
                        continue;
                    }
                    if matches!(cx.ty(ty), Ok(Ty::Void)) {
                        continue;
                    }
                    if cx.types.contains_key(&ty) {
                        cx.alloc(id, ty)?;
                    }
                }
            }
        }
    }
    Ok((fidx, bidx, nblocks, funcs))
}

/// What [`decode_function`] writes into and reads.
struct FuncDecode<'a> {
    cx: &'a mut Ctx,
    code: &'a mut Vec<Inst>,
    class: &'a mut Vec<u8>,
    blocks: &'a mut Vec<BlockInfo>,
    phis: &'a mut Vec<(u32, u32)>,
    phi_tab: &'a PhiTable,
    bidx: &'a HashMap<u32, u32>,
    fidx: &'a HashMap<u32, u32>,
}

/// Decodes function `fi` (`f`) into `st.code`, its blocks' starts and immediate
/// post-dominators, and its [`FuncInfo`].
fn decode_function(
    st: &mut FuncDecode<'_>,
    funcs: &mut [FuncInfo],
    fi: usize,
    f: &dr::Function,
) -> Result<(), EmuError> {
    if f.blocks.is_empty() {
        // A declaration (import): callable only if something links it, which
        // nothing does here.
        let id = f.def.as_ref().and_then(|d| d.result_id).unwrap_or(0);
        let name = st
            .cx
            .names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("%{id}"));
        funcs[fi].unsupported = Some(format!("call to the external function {name}"));
        return Ok(());
    }
    let traffic = vector_groups(st.cx, f);
    let mut dec = Decoder {
        cx: st.cx,
        code: st.code,
        class: st.class,
        phis: st.phis,
        phi_tab: st.phi_tab,
        bidx: st.bidx,
        fidx: st.fidx,
        funcs_ret: None,
        unsupported: None,
        callees: Vec::new(),
        global_atomics: false,
        float_arithmetic: false,
        ndrange_reads: Default::default(),
        traffic: Traffic::Own,
    };
    dec.funcs_ret = funcs[fi].ret;
    // successors for post-dominators
    let first = *f
        .blocks
        .first()
        .and_then(|b| b.label.as_ref())
        .and_then(|l| l.result_id)
        .and_then(|l| st.bidx.get(&l))
        .ok_or_else(|| e("function without blocks"))?;
    let nb = f.blocks.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for (bi, b) in f.blocks.iter().enumerate() {
        let gb = first + bi as u32;
        st.blocks[gb as usize].start = dec.code.len() as u32;
        let cur = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
        for (ii, i) in b.instructions.iter().enumerate() {
            dec.traffic = traffic.get(&(bi, ii)).copied().unwrap_or(Traffic::Own);
            dec.decode(i, cur)?;
        }
        if let Some(t) = b.instructions.last() {
            for o in &t.operands {
                if let Operand::IdRef(x) = o {
                    if matches!(
                        t.class.opcode,
                        Op::Branch | Op::BranchConditional | Op::Switch
                    ) {
                        if let Some(&g) = st.bidx.get(x) {
                            if g >= first && ((g - first) as usize) < nb {
                                succ[bi].push((g - first) as usize);
                            }
                        }
                    }
                }
            }
        }
    }
    let unsupported = dec.unsupported.take();
    let global_atomics = dec.global_atomics;
    let float_arithmetic = dec.float_arithmetic;
    let ndrange_reads = dec.ndrange_reads;
    let callees = std::mem::take(&mut dec.callees);
    let ipd = ipdoms(&succ);
    for (bi, p) in ipd.iter().enumerate() {
        st.blocks[(first as usize) + bi].ipdom = match p {
            Some(x) => first + *x as u32,
            None => EXIT,
        };
    }
    funcs[fi].entry = first;
    funcs[fi].unsupported = unsupported;
    funcs[fi].global_atomics = global_atomics;
    funcs[fi].float_arithmetic = float_arithmetic;
    funcs[fi].ndrange_reads = ndrange_reads;
    funcs[fi].callees = callees;
    Ok(())
}

/// Fill reconvergence points now that ipdoms are known.
fn fill_reconvergence(blocks: &[BlockInfo], code: &mut [Inst]) {
    let mut starts: Vec<(u32, u32)> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.start, i as u32))
        .collect();
    starts.sort();
    for pc in 0..code.len() {
        if let Inst::BrCond { reconv, .. } | Inst::Switch { reconv, .. } = &mut code[pc] {
            // block containing pc: the last start <= pc
            let pos = starts.partition_point(|&(s, _)| s <= pc as u32);
            // several blocks can't start at the same pc (each has a terminator)
            let b = starts[pos - 1].1;
            *reconv = blocks[b as usize].ipdom;
        }
    }
}

/// The kernels (entry points) of `m`, their arguments and unsupported features.
fn describe_kernels(
    cx: &Ctx,
    m: &dr::Module,
    fidx: &HashMap<u32, u32>,
    bidx: &HashMap<u32, u32>,
    funcs: &[FuncInfo],
    blocks: &[BlockInfo],
    code: &[Inst],
) -> Result<Vec<KernelInfo>, EmuError> {
    // Kernels.
    let mut kernels = Vec::new();
    for ep in &m.entry_points {
        let fid = op_id(ep.operands.get(1))?;
        let name = match ep.operands.get(2) {
            Some(Operand::LiteralString(s)) => s.clone(),
            _ => return Err(e("entry point without name")),
        };
        let fi = *fidx
            .get(&fid)
            .ok_or_else(|| e("entry point to unknown function"))?;
        let f = &m.functions[fi as usize];
        let mut args = Vec::new();
        for p in &f.parameters {
            let (id, ty) = (p.result_id.unwrap_or(0), p.result_type.unwrap_or(0));
            let byval = cx
                .decorations
                .get(&id)
                .map(|v| {
                    v.iter().any(|(d, o)| {
                        *d == Decoration::FuncParamAttr
                            && matches!(
                                o.first(),
                                Some(Operand::FunctionParameterAttribute(
                                    spirv::FunctionParameterAttribute::ByVal
                                ))
                            )
                    })
                })
                .unwrap_or(false);
            let (kind, size) = match cx.ty(ty)?.clone() {
                Ty::Pointer(sc, pointee) => match sc {
                    StorageClass::CrossWorkgroup | StorageClass::Generic => (ArgKind::Global, 8),
                    StorageClass::UniformConstant => (ArgKind::Constant, 8),
                    StorageClass::Workgroup => (ArgKind::Local, 8),
                    StorageClass::Function if byval => {
                        (ArgKind::ByVal, cx.size_align(pointee)?.0 as u32)
                    }
                    other => {
                        return Err(EmuError::Unsupported(format!(
                            "kernel argument in {other:?}"
                        )))
                    }
                },
                Ty::Opaque(n) => {
                    kernels.push(KernelInfo {
                        name: name.clone(),
                        args: Vec::new(),
                        func: fi,
                        unsupported: Some(n.to_string()),
                        global_atomics: false,
                        // not decoded: assumed, so that balance mode stays byte-identical
                        float_arithmetic: true,
                        ndrange_reads: super::NdRangeReads {
                            extent: true,
                            origin: true,
                            linear_id: true,
                        },
                        loop_skips: HashMap::new(),
                    });
                    args.clear();
                    break;
                }
                _ => (ArgKind::Scalar, cx.size_align(ty)?.0 as u32),
            };
            let slot = cx.s(id)?;
            let leaves = cx.leaf_vec(ty)?;
            args.push(ArgInfo {
                kind,
                size,
                name: cx.names.get(&id).cloned().unwrap_or_default(),
                slot,
                leaves,
            });
        }
        if kernels
            .last()
            .map(|k: &KernelInfo| k.name == name)
            .unwrap_or(false)
        {
            continue;
        }
        // Unsupported features of the kernel and its callees.
        let mut seen = vec![false; funcs.len()];
        let mut stack = vec![fi];
        let mut unsup = None;
        let mut global_atomics = false;
        let mut float_arithmetic = false;
        let mut ndrange_reads = super::NdRangeReads::default();
        while let Some(x) = stack.pop() {
            if std::mem::replace(&mut seen[x as usize], true) {
                continue;
            }
            global_atomics |= funcs[x as usize].global_atomics;
            float_arithmetic |= funcs[x as usize].float_arithmetic;
            ndrange_reads = ndrange_reads.union(funcs[x as usize].ndrange_reads);
            if unsup.is_none() {
                unsup = funcs[x as usize].unsupported.clone();
            }
            stack.extend(funcs[x as usize].callees.iter().copied());
        }
        let loop_skips = m
            .functions
            .iter()
            .find(|g| g.def.as_ref().and_then(|d| d.result_id) == Some(fid))
            .map(|g| skip_branches(g, bidx, blocks, code, m))
            .unwrap_or_default();
        kernels.push(KernelInfo {
            name,
            args,
            func: fi,
            unsupported: unsup,
            global_atomics,
            float_arithmetic,
            ndrange_reads,
            loop_skips,
        });
    }
    Ok(kernels)
}

/// The loop skips of kernel function `f` keyed by the pc of each entering branch.
fn skip_branches(
    f: &dr::Function,
    bidx: &HashMap<u32, u32>,
    blocks: &[BlockInfo],
    code: &[Inst],
    m: &dr::Module,
) -> HashMap<u32, Vec<SkipBranch>> {
    let mut out: HashMap<u32, Vec<SkipBranch>> = HashMap::new();
    for s in crate::emu::dataflow::loop_skips(m, f) {
        let (Some(&header), Some(&exit)) = (bidx.get(&s.header), bidx.get(&s.exit)) else {
            continue;
        };
        for p in &s.entries {
            let Some(b) = bidx.get(p).and_then(|b| blocks.get(*b as usize)) else {
                continue;
            };
            // the block's terminator: its first branch
            let Some(pc) = (b.start as usize..code.len()).find(|pc| {
                matches!(
                    code[*pc],
                    Inst::Br { .. }
                        | Inst::BrCond { .. }
                        | Inst::Switch { .. }
                        | Inst::Return { .. }
                        | Inst::Unreachable
                )
            }) else {
                continue;
            };
            if matches!(code[pc], Inst::Br { .. } | Inst::BrCond { .. }) {
                out.entry(pc as u32).or_default().push(SkipBranch {
                    header,
                    exit,
                    reads: s.reads.clone().map(Vec::into_boxed_slice),
                });
            }
        }
    }
    out
}
