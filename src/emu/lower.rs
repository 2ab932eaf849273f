//! Lowers, in textual LLVM IR, what llvm-spirv 15 rejects in clang's `-O2` output into plain
//! instructions it translates (issue 32 item 2): the front end's path on a machine without
//! LLVM's `opt` ([`super::frontend`], [`super::frontend::CompilePath::O2Lowered`]).
//!
//! llvm-spirv 15 stops with `InvalidFunctionCall: Unexpected llvm intrinsic` at intrinsics
//! that LLVM's optimizer creates from plain code (InstCombine turns `z = x + y; z < x ?
//! UINT_MAX : z` into `llvm.uadd.sat`; the SLP vectorizer makes `llvm.vector.reduce.*`), and
//! with `InvalidInstruction` at `freeze`. Each such call or instruction is replaced by the
//! instructions it stands for, one line at a time; names of the new values start with
//! `%clprism.l`, so the numbering of LLVM's unnamed values is kept.
//!
//! Lowered: `llvm.uadd.sat`, `llvm.ssub.sat`, `llvm.uadd/usub/ssub.with.overflow`,
//! `llvm.vector.reduce.{add,mul,and,or,xor,smax,smin,umax,umin,fadd,fmul,fmax,fmin}`,
//! `llvm.canonicalize` (the value itself), `freeze` (the value itself); and a `switch` on a
//! narrowed integer (`i2`, `i3`: `InvalidBitWidth`) is widened back ([`widen_switches`]).
//! Anything else is left as it is (the front end then falls back to `-O0`).

/// The result of [`lower`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    /// The module's text with the lowered lines.
    pub text: String,
    /// Calls and instructions replaced.
    pub replaced: usize,
}

/// Words that may stand between a call's argument type and its value, or between `call`
/// and the return type.
const ATTRS: &[&str] = &[
    "noundef", "zeroext", "signext", "inreg", "nonnull", "immarg", "fast", "nnan", "ninf", "nsz",
    "arcp", "contract", "afn", "reassoc", "tail", "notail", "musttail", "call",
];

/// Lowers every line of `ir` that it can (see the module docs).
pub fn lower(ir: &str) -> Lowered {
    let mut out = String::with_capacity(ir.len() + 256);
    let mut replaced = 0;
    let mut declares: Vec<String> = Vec::new();
    for (n, line) in ir.lines().enumerate() {
        match lower_line(line, n, &mut declares) {
            Some(lines) => {
                replaced += 1;
                for l in lines {
                    out.push_str("  ");
                    out.push_str(&l);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    for d in declares {
        // "declare float @llvm.maxnum.f32(...)": added when the module lacks it
        let name = d
            .split('(')
            .next()
            .and_then(|h| h.rsplit(' ').next())
            .unwrap_or("");
        let call = format!("{name}(");
        if !ir
            .lines()
            .any(|l| l.starts_with("declare") && l.contains(&call))
        {
            out.push_str(&d);
            out.push('\n');
        }
    }
    Lowered {
        text: out,
        replaced,
    }
}

/// Widens each `switch` on an integer of a width llvm-spirv rejects (`InvalidBitWidth`:
/// InstCombine shrinks a switch's condition to the bits its cases need, `i2`, `i3`, ...) back
/// to the type it was truncated from, masked: `%t = trunc i32 %v to i2` and `switch i2 %t,
/// ... [ i2 -2, label %x ]` become `%t = and i32 %v, 3` and `switch i32 %t, ... [ i32 2,
/// label %x ]`. Only where `%t` has no other use; returns the text and the switches widened.
pub fn widen_switches(ir: &str) -> (String, usize) {
    let mut lines: Vec<String> = ir.lines().map(str::to_string).collect();
    let mut widened = 0;
    for d in 0..lines.len() {
        let Some((name, from, bits, v)) = odd_trunc(&lines[d]) else {
            continue;
        };
        let uses: Vec<usize> = (0..lines.len())
            .filter(|&i| i != d && mentions(&lines[i], &name))
            .collect();
        let head = format!("switch i{bits} {name},");
        if uses.is_empty()
            || !uses
                .iter()
                .all(|&i| lines[i].trim_start().starts_with(&head))
        {
            continue;
        }
        let mask = (1u64 << bits) - 1;
        lines[d] = format!("  {name} = and {from} {v}, {mask}");
        for &i in &uses {
            lines[i] =
                lines[i].replacen(&format!("switch i{bits} "), &format!("switch {from} "), 1);
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim() != "]" {
                lines[j] = widen_case(&lines[j], bits, &from).unwrap_or_else(|| lines[j].clone());
                j += 1;
            }
        }
        widened += uses.len();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    (out, widened)
}

/// `(%t, FROM, N, %v)` of `%t = trunc FROM %v to iN` with `N` a width llvm-spirv rejects.
fn odd_trunc(line: &str) -> Option<(String, String, u32, String)> {
    let (lhs, rhs) = line.trim().split_once(" = trunc ")?;
    let (src, to) = rhs.split_once(" to i")?;
    let bits: u32 = to.trim().parse().ok()?;
    if matches!(bits, 1 | 8 | 16 | 32 | 64) || bits > 63 {
        return None;
    }
    let (from, v) = src.split_once(' ')?;
    Some((
        lhs.to_string(),
        from.to_string(),
        bits,
        v.trim().to_string(),
    ))
}

/// A case line `iN C, label %x` of a widened switch, in type `from` (`C` as unsigned).
fn widen_case(line: &str, bits: u32, from: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix(&format!("i{bits} "))?;
    let (c, label) = rest.split_once(',')?;
    let c: i64 = c.trim().parse().ok()?;
    let unsigned = (c as u64) & ((1u64 << bits) - 1);
    Some(format!("    {from} {unsigned},{label}"))
}

/// True when `line` names the value `name` (not merely a longer name starting with it).
fn mentions(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let next = line[i + name.len()..].chars().next();
        !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    })
}

/// The lines replacing `line` (the `n`th), or `None` when it is left as it is. Declarations
/// the new lines need are added to `declares`.
fn lower_line(line: &str, n: usize, declares: &mut Vec<String>) -> Option<Vec<String>> {
    let t = line.trim();
    let (lhs, rhs) = t.split_once(" = ")?;
    if !lhs.starts_with('%') {
        return None;
    }
    let p = format!("%clprism.l{n}");
    if let Some(rest) = rhs.strip_prefix("freeze ") {
        let (ty, v) = typed(rest)?;
        return Some(vec![same(lhs, &ty, &v)]);
    }
    let at = rhs.find("@llvm.")?;
    if !rhs[..at].split_whitespace().any(|w| w == "call") {
        return None;
    }
    let ret = ret_type(&rhs[..at])?;
    let open = at + rhs[at..].find('(')?;
    let name = &rhs[at + 6..open];
    let close = open + matching(&rhs[open..])?;
    let args: Vec<(String, String)> = split_top(&rhs[open + 1..close])
        .iter()
        .map(|a| typed(a))
        .collect::<Option<_>>()?;
    let base = name.rsplit_once('.')?.0;
    lower_call(base, lhs, &ret, &args, &p, declares)
}

/// The replacement of `lhs = call RET @llvm.BASE.*(args)`.
fn lower_call(
    base: &str,
    lhs: &str,
    ret: &str,
    args: &[(String, String)],
    p: &str,
    declares: &mut Vec<String>,
) -> Option<Vec<String>> {
    let arg = |i: usize| args.get(i).map(|(t, v)| (t.as_str(), v.as_str()));
    match base {
        "canonicalize" => {
            let (t, v) = arg(0)?;
            Some(vec![same(lhs, t, v)])
        }
        "uadd.sat" => {
            let ((t, a), (_, b)) = (arg(0)?, arg(1)?);
            Some(saturating_add(lhs, t, a, b, p))
        }
        "ssub.sat" => {
            let ((t, a), (_, b)) = (arg(0)?, arg(1)?);
            saturating_sub(lhs, t, a, b, p)
        }
        "uadd.with.overflow" | "usub.with.overflow" | "ssub.with.overflow" => {
            let ((t, a), (_, b)) = (arg(0)?, arg(1)?);
            Some(with_overflow(base, lhs, ret, t, a, b, p))
        }
        _ => {
            let op = base.strip_prefix("vector.reduce.")?;
            reduce(op, lhs, args, p, declares)
        }
    }
}

/// `lhs = llvm.uadd.sat(a, b)`: the sum, all ones where it wrapped.
fn saturating_add(lhs: &str, t: &str, a: &str, b: &str, p: &str) -> Vec<String> {
    let ct = bool_type(t);
    vec![
        format!("{p}.s = add {t} {a}, {b}"),
        format!("{p}.c = icmp ult {t} {p}.s, {a}"),
        format!("{p}.m = sext {ct} {p}.c to {t}"),
        format!("{lhs} = or {t} {p}.s, {p}.m"),
    ]
}

/// `lhs = llvm.ssub.sat(a, b)`: the difference, or where it overflowed the extreme of
/// `a`'s sign (`(a >> (w - 1)) ^ MAX`).
fn saturating_sub(lhs: &str, t: &str, a: &str, b: &str, p: &str) -> Option<Vec<String>> {
    let (ct, w) = (bool_type(t), int_bits(t)?);
    let mut v = vec![format!("{p}.s = sub {t} {a}, {b}")];
    v.extend(signed_overflow(t, a, b, p));
    let shift = splat(t, &(w - 1).to_string());
    v.push(format!("{p}.h = ashr {t} {a}, {shift}"));
    let max = splat(t, &((1u128 << (w - 1)) - 1).to_string());
    v.push(format!("{p}.x = xor {t} {p}.h, {max}"));
    v.push(format!("{lhs} = select {ct} {p}.o, {t} {p}.x, {t} {p}.s"));
    Some(v)
}

/// `lhs = llvm.{uadd,usub,ssub}.with.overflow(a, b)`: `{ result, overflowed }` of type `ret`.
fn with_overflow(
    base: &str,
    lhs: &str,
    ret: &str,
    t: &str,
    a: &str,
    b: &str,
    p: &str,
) -> Vec<String> {
    let mut v = Vec::new();
    match base {
        "uadd.with.overflow" => {
            v.push(format!("{p}.s = add {t} {a}, {b}"));
            v.push(format!("{p}.o = icmp ult {t} {p}.s, {a}"));
        }
        "usub.with.overflow" => {
            v.push(format!("{p}.s = sub {t} {a}, {b}"));
            v.push(format!("{p}.o = icmp ult {t} {a}, {b}"));
        }
        _ => {
            v.push(format!("{p}.s = sub {t} {a}, {b}"));
            v.extend(signed_overflow(t, a, b, p));
        }
    }
    let ct = bool_type(t);
    v.push(format!("{p}.r = insertvalue {ret} undef, {t} {p}.s, 0"));
    v.push(format!("{lhs} = insertvalue {ret} {p}.r, {ct} {p}.o, 1"));
    v
}

/// `{p}.o`: whether `a - b` overflows as signed, from `{p}.s`, the wrapped difference (the
/// operands differ in sign and the result's sign is not `a`'s).
fn signed_overflow(t: &str, a: &str, b: &str, p: &str) -> Vec<String> {
    vec![
        format!("{p}.x1 = xor {t} {a}, {b}"),
        format!("{p}.x2 = xor {t} {a}, {p}.s"),
        format!("{p}.x3 = and {t} {p}.x1, {p}.x2"),
        format!("{p}.o = icmp slt {t} {p}.x3, zeroinitializer"),
    ]
}

/// `llvm.vector.reduce.OP` as a chain over the extracted components, in order.
fn reduce(
    op: &str,
    lhs: &str,
    args: &[(String, String)],
    p: &str,
    declares: &mut Vec<String>,
) -> Option<Vec<String>> {
    let ordered = matches!(op, "fadd" | "fmul");
    let (vt, v) = args.get(usize::from(ordered))?;
    let (n, et) = vector_of(vt)?;
    let mut out = Vec::new();
    for i in 0..n {
        out.push(format!("{p}.e{i} = extractelement {vt} {v}, i32 {i}"));
    }
    let mut acc = if ordered {
        args[0].1.clone()
    } else {
        format!("{p}.e0")
    };
    let first = usize::from(!ordered);
    for i in first..n {
        let dst = if i + 1 == n {
            lhs.to_string()
        } else {
            format!("{p}.a{i}")
        };
        let e = format!("{p}.e{i}");
        match op {
            "add" | "mul" | "and" | "or" | "xor" | "fadd" | "fmul" => {
                out.push(format!("{dst} = {op} {et} {acc}, {e}"))
            }
            "smax" | "smin" | "umax" | "umin" => {
                let pred = &format!(
                    "{}{}",
                    &op[..1],
                    if &op[1..] == "max" { "gt" } else { "lt" }
                );
                out.push(format!("{p}.c{i} = icmp {pred} {et} {acc}, {e}"));
                out.push(format!("{dst} = select i1 {p}.c{i}, {et} {acc}, {et} {e}"));
            }
            "fmax" | "fmin" => {
                let f = format!("llvm.{}num.{}", &op[1..], float_suffix(&et)?);
                let d = format!("declare {et} @{f}({et}, {et})");
                if !declares.contains(&d) {
                    declares.push(d);
                }
                out.push(format!("{dst} = call {et} @{f}({et} {acc}, {et} {e})"));
            }
            _ => return None,
        }
        acc = dst;
    }
    if n == first {
        // a one-component reduction without a start value
        out.push(same(lhs, &et, &acc));
    }
    Some(out)
}

/// `lhs` as the value `v` of type `t` itself (a `select` on `true`: valid for every type).
fn same(lhs: &str, t: &str, v: &str) -> String {
    format!("{lhs} = select i1 true, {t} {v}, {t} {v}")
}

/// `i1`, or `<N x i1>` for a vector type.
fn bool_type(t: &str) -> String {
    match vector_of(t) {
        Some((n, _)) => format!("<{n} x i1>"),
        None => "i1".into(),
    }
}

/// A constant of type `t` (scalar or vector of integers) with every component `v`.
fn splat(t: &str, v: &str) -> String {
    match vector_of(t) {
        Some((n, et)) => {
            let parts: Vec<String> = (0..n).map(|_| format!("{et} {v}")).collect();
            format!("<{}>", parts.join(", "))
        }
        None => v.to_string(),
    }
}

/// Bits of an integer type or of a vector's integer components.
fn int_bits(t: &str) -> Option<u32> {
    let et = vector_of(t).map_or(t.to_string(), |(_, e)| e);
    et.strip_prefix('i')?
        .parse()
        .ok()
        .filter(|b| (2..=64).contains(b))
}

/// The suffix LLVM's intrinsic names give a floating-point type.
fn float_suffix(t: &str) -> Option<&'static str> {
    match t {
        "half" => Some("f16"),
        "float" => Some("f32"),
        "double" => Some("f64"),
        _ => None,
    }
}

/// `(N, T)` of a vector type `<N x T>`.
fn vector_of(t: &str) -> Option<(usize, String)> {
    let inner = t.strip_prefix('<')?.strip_suffix('>')?;
    let (n, et) = inner.split_once(" x ")?;
    Some((n.trim().parse().ok()?, et.trim().to_string()))
}

/// Index of the bracket closing the one `s` starts with.
fn matching(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '{' | '[' => depth += 1,
            ')' | '>' | '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at the commas outside brackets, trimmed.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '(' | '<' | '{' | '[' => depth += 1,
            ')' | '>' | '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// `TYPE [attributes] VALUE` as `(TYPE, VALUE)`.
fn typed(s: &str) -> Option<(String, String)> {
    let s = s.trim();
    let end = if s.starts_with(['<', '{', '[']) {
        matching(s)? + 1
    } else {
        s.find(' ')?
    };
    let ty = s[..end].to_string();
    let mut rest = s[end..].trim_start();
    while let Some((w, r)) = rest.split_once(' ') {
        if !ATTRS.contains(&w) {
            break;
        }
        rest = r.trim_start();
    }
    (!rest.is_empty()).then(|| (ty, rest.to_string()))
}

/// The return type in the text of a call before the callee (`tail call fast float `).
fn ret_type(s: &str) -> Option<String> {
    let s = s.trim_end();
    if s.ends_with(['>', '}', ']']) {
        let rev: String = s.chars().rev().collect();
        let mut depth = 0i32;
        for (i, c) in rev.char_indices() {
            match c {
                ')' | '>' | '}' | ']' => depth += 1,
                '(' | '<' | '{' | '[' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(s[s.len() - i - 1..].to_string());
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    s.split_whitespace().last().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturating_add_becomes_add_compare_or() {
        let l = lower("  %12 = tail call i32 @llvm.uadd.sat.i32(i32 noundef %7, i32 %11)\n");
        assert_eq!(l.replaced, 1);
        assert_eq!(
            l.text,
            "  %clprism.l0.s = add i32 %7, %11\n  %clprism.l0.c = icmp ult i32 %clprism.l0.s, %7\n  \
             %clprism.l0.m = sext i1 %clprism.l0.c to i32\n  %12 = or i32 %clprism.l0.s, %clprism.l0.m\n"
        );
        let v = lower(
            "%r = call <2 x i32> @llvm.uadd.sat.v2i32(<2 x i32> %a, <2 x i32> <i32 1, i32 2>)",
        );
        assert!(
            v.text.contains("add <2 x i32> %a, <i32 1, i32 2>"),
            "{}",
            v.text
        );
        assert!(v.text.contains("sext <2 x i1>"), "{}", v.text);
    }

    #[test]
    fn reductions_freeze_and_overflow() {
        let r = lower(
            "  %s = call fast float @llvm.vector.reduce.fadd.v2f32(float -0.0, <2 x float> %v)",
        );
        assert_eq!(r.replaced, 1);
        assert!(
            r.text
                .contains("%clprism.l0.a0 = fadd float -0.0, %clprism.l0.e0"),
            "{}",
            r.text
        );
        assert!(
            r.text
                .contains("%s = fadd float %clprism.l0.a0, %clprism.l0.e1"),
            "{}",
            r.text
        );
        let m = lower("  %m = call i32 @llvm.vector.reduce.umax.v3i32(<3 x i32> %v)");
        assert!(
            m.text
                .contains("icmp ugt i32 %clprism.l0.e0, %clprism.l0.e1"),
            "{}",
            m.text
        );
        assert!(
            m.text.contains("%m = select i1 %clprism.l0.c2"),
            "{}",
            m.text
        );
        let f = lower("  %m = call float @llvm.vector.reduce.fmax.v2f32(<2 x float> %v)");
        assert!(
            f.text
                .contains("declare float @llvm.maxnum.f32(float, float)"),
            "{}",
            f.text
        );
        let z = lower("  %24 = freeze <4 x i1> %23");
        assert_eq!(
            z.text,
            "  %24 = select i1 true, <4 x i1> %23, <4 x i1> %23\n"
        );
        let o = lower("  %5 = call { i64, i1 } @llvm.uadd.with.overflow.i64(i64 %a, i64 1)");
        assert!(
            o.text
                .contains("insertvalue { i64, i1 } undef, i64 %clprism.l0.s, 0"),
            "{}",
            o.text
        );
        assert!(o
            .text
            .contains("%5 = insertvalue { i64, i1 } %clprism.l0.r, i1 %clprism.l0.o, 1"));
    }

    #[test]
    fn narrowed_switches_are_widened() {
        let ir =
            "  %10 = trunc i32 %9 to i2\n  switch i2 %10, label %14 [\n    i2 0, label %11\n    \
                  i2 -2, label %13\n  ]\n  %100 = add i32 %1, 1\n";
        let (w, n) = widen_switches(ir);
        assert_eq!(n, 1);
        assert_eq!(
            w,
            "  %10 = and i32 %9, 3\n  switch i32 %10, label %14 [\n    i32 0, label %11\n    \
             i32 2, label %13\n  ]\n  %100 = add i32 %1, 1\n"
        );
        // another use of the narrow value: left as it is
        let other = format!("{ir}  %20 = zext i2 %10 to i32\n");
        assert_eq!(widen_switches(&other), (other.clone(), 0));
    }

    #[test]
    fn other_lines_are_kept() {
        let src = "define void @k() {\n  %1 = call float @llvm.fmuladd.f32(float %a, float %b, float %c)\n  \
                   %2 = call { i32, i1 } @llvm.smul.with.overflow.i32(i32 %x, i32 %y)\n  ret void\n}\n";
        let l = lower(src);
        assert_eq!(l.replaced, 0);
        assert_eq!(l.text, src);
    }
}
