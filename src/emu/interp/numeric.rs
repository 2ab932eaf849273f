//! Numerics of the interpreter: half floats, rounding, integer/float conversions, the
//! element-wise binary and unary operations, and the special functions (erf, gamma).

use super::*;

/// IEEE half → single.
pub(crate) fn h2f(h: u16) -> f32 {
    let s = ((h >> 15) as u32) << 31;
    let e = ((h >> 10) & 0x1f) as u32;
    let m = (h & 0x3ff) as u32;
    let bits = if e == 0 {
        if m == 0 {
            s
        } else {
            // subnormal
            let v = m as f32 * (1.0 / 16_777_216.0);
            return if s != 0 { -v } else { v };
        }
    } else if e == 31 {
        s | 0x7f80_0000 | (m << 13)
    } else {
        s | ((e + 112) << 23) | (m << 13)
    };
    f32::from_bits(bits)
}

/// Single → half with a rounding mode (bit-exact IEEE 754 conversion).
pub(crate) fn f2h(f: f32, r: Round) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let neg = sign != 0;
    let e = ((b >> 23) & 0xff) as i32;
    let m = (b & 0x7f_ffff) as u64;
    if e == 255 {
        return sign | 0x7c00 | if m != 0 { 0x200 | (m >> 13) as u16 } else { 0 };
    }
    if e == 0 && m == 0 {
        return sign;
    }
    // value = mant * 2^(e - 150) with a 24-bit mant (f32 subnormals: e = 1, no hidden bit)
    let (mant, e) = if e == 0 { (m, 1) } else { (m | 0x80_0000, e) };
    let exp = e - 127 + 15; // biased half exponent for a normal result
    let shift: i32 = if exp > 0 { 13 } else { 13 + (1 - exp) };
    let (kept, rem, half) = if shift >= 40 {
        (0u64, mant, 1u64 << 39)
    } else {
        (
            mant >> shift,
            mant & ((1u64 << shift) - 1),
            1u64 << (shift - 1),
        )
    };
    let up = match r {
        Round::Rtz => false,
        Round::Rtp => rem != 0 && !neg,
        Round::Rtn => rem != 0 && neg,
        _ => rem > half || (rem == half && kept & 1 == 1),
    };
    let kept = kept + up as u64;
    let v = if exp > 0 {
        (((exp - 1) as u64) << 10) + kept
    } else {
        kept
    };
    if v >= 0x7c00 {
        let inf = match r {
            Round::Rtz => false,
            Round::Rtp => !neg,
            Round::Rtn => neg,
            _ => true,
        };
        return sign | if inf { 0x7c00 } else { 0x7bff };
    }
    sign | v as u16
}

#[inline(always)]
pub(super) fn tof(x: u64, k: Sc) -> f64 {
    match k {
        Sc::F32 => f32::from_bits(x as u32) as f64,
        Sc::F64 => f64::from_bits(x),
        Sc::F16 => h2f(x as u16) as f64,
        _ => x as f64,
    }
}

#[inline(always)]
pub(super) fn fromf(v: f64, k: Sc) -> u64 {
    match k {
        Sc::F32 => (v as f32).to_bits() as u64,
        Sc::F64 => v.to_bits(),
        Sc::F16 => f2h(v as f32, Round::Rte) as u64,
        _ => v as u64,
    }
}

/// Rounds an f64 to f32 with a rounding mode.
pub(super) fn f64_to_f32(x: f64, r: Round) -> f32 {
    let y = x as f32;
    if x.is_nan() || y as f64 == x {
        return y;
    }
    match r {
        Round::Rtz => {
            if (y as f64).abs() > x.abs() {
                if y > 0.0 {
                    y.next_down()
                } else {
                    y.next_up()
                }
            } else {
                y
            }
        }
        Round::Rtp => {
            if (y as f64) < x {
                y.next_up()
            } else {
                y
            }
        }
        Round::Rtn => {
            if (y as f64) > x {
                y.next_down()
            } else {
                y
            }
        }
        _ => y,
    }
}

/// Integer → float with rounding (exact via i128 → f64 when possible).
pub(super) fn int_to_float(v: i128, to: Sc, r: Round) -> u64 {
    match to {
        Sc::F64 => {
            let y = v as f64;
            let back = y as i128;
            let y = if back == v || matches!(r, Round::Default | Round::Rte) {
                y
            } else {
                match r {
                    Round::Rtz => {
                        if back.abs() > v.abs() {
                            if y > 0.0 {
                                y.next_down()
                            } else {
                                y.next_up()
                            }
                        } else {
                            y
                        }
                    }
                    Round::Rtp => {
                        if back < v {
                            y.next_up()
                        } else {
                            y
                        }
                    }
                    _ => {
                        if back > v {
                            y.next_down()
                        } else {
                            y
                        }
                    }
                }
            };
            y.to_bits()
        }
        Sc::F32 | Sc::F16 => {
            // f32 from a 64-bit integer: round once. Use exact arithmetic with i128.
            let y = v as f32; // RTE
            let back = y as i128;
            let y = if back == v || matches!(r, Round::Default | Round::Rte) {
                y
            } else {
                match r {
                    Round::Rtz => {
                        if back.abs() > v.abs() {
                            if y > 0.0 {
                                y.next_down()
                            } else {
                                y.next_up()
                            }
                        } else {
                            y
                        }
                    }
                    Round::Rtp => {
                        if back < v {
                            y.next_up()
                        } else {
                            y
                        }
                    }
                    _ => {
                        if back > v {
                            y.next_down()
                        } else {
                            y
                        }
                    }
                }
            };
            if to == Sc::F16 {
                f2h(y, r) as u64
            } else {
                y.to_bits() as u64
            }
        }
        _ => 0,
    }
}

pub(super) fn round_f(x: f64, r: Round) -> f64 {
    match r {
        Round::Rte => {
            let t = x.round();
            if (x - x.trunc()).abs() == 0.5 {
                2.0 * (x / 2.0).round_ties_even_compat()
            } else {
                t
            }
        }
        Round::Rtp => x.ceil(),
        Round::Rtn => x.floor(),
        _ => x.trunc(),
    }
}

trait TiesEven {
    fn round_ties_even_compat(self) -> f64;
}
impl TiesEven for f64 {
    fn round_ties_even_compat(self) -> f64 {
        self.round_ties_even()
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn exec_bin(
    regs: &mut [u64],
    w: usize,
    mask: u64,
    op: BinOp,
    k: Sc,
    n: usize,
    d: usize,
    a: usize,
    b: usize,
) {
    let bits = k.bits();
    let mk = mask_bits(bits);
    macro_rules! go {
        (|$x:ident, $y:ident| $e:expr) => {{
            for j in 0..n {
                let (ab, bb, db) = ((a + j) * w, (b + j) * w, (d + j) * w);
                if mask == (if w == 64 { !0 } else { (1u64 << w) - 1 }) {
                    for l in 0..w {
                        let $x = regs[ab + l];
                        let $y = regs[bb + l];
                        regs[db + l] = $e;
                    }
                } else {
                    lanes!(mask, l, {
                        let $x = regs[ab + l];
                        let $y = regs[bb + l];
                        regs[db + l] = $e;
                    });
                }
            }
        }};
    }
    macro_rules! fgo {
        ($op:tt) => {{
            match k {
                Sc::F32 => go!(|x, y| (f32::from_bits(x as u32) $op f32::from_bits(y as u32)).to_bits() as u64),
                Sc::F64 => go!(|x, y| (f64::from_bits(x) $op f64::from_bits(y)).to_bits()),
                _ => go!(|x, y| fromf(tof(x, k) $op tof(y, k), k)),
            }
        }};
    }
    macro_rules! fcmp {
        (|$x:ident, $y:ident| $e:expr) => {{
            go!(|xx, yy| {
                let $x = tof(xx, k);
                let $y = tof(yy, k);
                ($e) as u64
            })
        }};
    }
    match op {
        BinOp::IAdd => go!(|x, y| x.wrapping_add(y) & mk),
        BinOp::ISub => go!(|x, y| x.wrapping_sub(y) & mk),
        BinOp::IMul => go!(|x, y| x.wrapping_mul(y) & mk),
        BinOp::UDiv => go!(|x, y| x.checked_div(y).unwrap_or(0)),
        BinOp::UMod => go!(|x, y| x.checked_rem(y).unwrap_or(0)),
        BinOp::SDiv => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                (p.wrapping_div(q) as u64) & mk
            }
        }),
        BinOp::SRem => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                (p.wrapping_rem(q) as u64) & mk
            }
        }),
        BinOp::SMod => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                let r = p.wrapping_rem(q);
                let r = if r != 0 && ((r < 0) != (q < 0)) {
                    r + q
                } else {
                    r
                };
                (r as u64) & mk
            }
        }),
        BinOp::Shl => go!(|x, y| (x << (y % bits as u64)) & mk),
        BinOp::LShr => go!(|x, y| x >> (y % bits as u64)),
        BinOp::AShr => go!(|x, y| ((sext(x, bits) >> (y % bits as u64)) as u64) & mk),
        BinOp::Or => go!(|x, y| x | y),
        BinOp::Xor => go!(|x, y| x ^ y),
        BinOp::And => go!(|x, y| x & y),
        BinOp::FAdd => fgo!(+),
        BinOp::FSub => fgo!(-),
        BinOp::FMul => fgo!(*),
        BinOp::FDiv => fgo!(/),
        BinOp::FRem => go!(|x, y| fromf(tof(x, k) % tof(y, k), k)),
        BinOp::FMod => go!(|x, y| {
            let (p, q) = (tof(x, k), tof(y, k));
            let r = p % q;
            let r = if r != 0.0 && ((r < 0.0) != (q < 0.0)) {
                r + q
            } else {
                r
            };
            fromf(r, k)
        }),
        BinOp::IEq | BinOp::LEq => go!(|x, y| (x == y) as u64),
        BinOp::INe | BinOp::LNe => go!(|x, y| (x != y) as u64),
        BinOp::UGt => go!(|x, y| (x > y) as u64),
        BinOp::UGe => go!(|x, y| (x >= y) as u64),
        BinOp::ULt => go!(|x, y| (x < y) as u64),
        BinOp::ULe => go!(|x, y| (x <= y) as u64),
        BinOp::SGt => go!(|x, y| (sext(x, bits) > sext(y, bits)) as u64),
        BinOp::SGe => go!(|x, y| (sext(x, bits) >= sext(y, bits)) as u64),
        BinOp::SLt => go!(|x, y| (sext(x, bits) < sext(y, bits)) as u64),
        BinOp::SLe => go!(|x, y| (sext(x, bits) <= sext(y, bits)) as u64),
        BinOp::FOEq => fcmp!(|x, y| x == y),
        BinOp::FONe => fcmp!(|x, y| x != y && !x.is_nan() && !y.is_nan()),
        BinOp::FOLt => fcmp!(|x, y| x < y),
        BinOp::FOGt => fcmp!(|x, y| x > y),
        BinOp::FOLe => fcmp!(|x, y| x <= y),
        BinOp::FOGe => fcmp!(|x, y| x >= y),
        BinOp::FUEq => fcmp!(|x, y| x == y || x.is_nan() || y.is_nan()),
        BinOp::FUNe => fcmp!(|x, y| x != y),
        BinOp::FULt => fcmp!(|x, y| !(x >= y)),
        BinOp::FUGt => fcmp!(|x, y| !(x <= y)),
        BinOp::FULe => fcmp!(|x, y| !(x > y)),
        BinOp::FUGe => fcmp!(|x, y| !(x < y)),
        BinOp::FOrd => fcmp!(|x, y| !x.is_nan() && !y.is_nan()),
        BinOp::FUnord => fcmp!(|x, y| x.is_nan() || y.is_nan()),
        BinOp::LAnd => go!(|x, y| x & y & 1),
        BinOp::LOr => go!(|x, y| (x | y) & 1),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn exec_un(
    regs: &mut [u64],
    w: usize,
    mask: u64,
    op: UnOp,
    k: Sc,
    n: usize,
    d: usize,
    a: usize,
) {
    let bits = k.bits();
    let mk = mask_bits(bits);
    for j in 0..n {
        lanes!(mask, l, {
            let x = regs[(a + j) * w + l];
            let f = || tof(x, k);
            regs[(d + j) * w + l] = match op {
                UnOp::Not => !x & mk,
                UnOp::SNeg => (x.wrapping_neg()) & mk,
                UnOp::FNeg => match k {
                    Sc::F32 => x ^ 0x8000_0000,
                    Sc::F64 => x ^ (1 << 63),
                    _ => x ^ 0x8000,
                },
                UnOp::LNot => (x & 1) ^ 1,
                UnOp::IsNan => f().is_nan() as u64,
                UnOp::IsInf => f().is_infinite() as u64,
                UnOp::IsFinite => f().is_finite() as u64,
                UnOp::IsNormal => match k {
                    Sc::F32 => f32::from_bits(x as u32).is_normal() as u64,
                    _ => f().is_normal() as u64,
                },
                UnOp::SignBit => (x >> (bits - 1)) & 1,
                UnOp::BitCount => (x & mk).count_ones() as u64,
                UnOp::BitReverse => (x.reverse_bits() >> (64 - bits)) & mk,
            };
        });
    }
}

pub(super) fn convert(op: ConvOp, from: Sc, to: Sc, x: u64, sat: bool, r: Round) -> u64 {
    let tb = to.bits();
    let mk = mask_bits(tb);
    let fb = from.bits();
    let smin = if tb >= 64 {
        i64::MIN as i128
    } else {
        -(1i128 << (tb - 1))
    };
    let smax = if tb >= 64 {
        i64::MAX as i128
    } else {
        (1i128 << (tb - 1)) - 1
    };
    let umax = mk as i128;
    match op {
        ConvOp::FToU | ConvOp::FToS => {
            let v = tof(x, from);
            let v = round_f(v, if r == Round::Default { Round::Rtz } else { r });
            let (lo, hi) = if op == ConvOp::FToU {
                (0i128, umax)
            } else {
                (smin, smax)
            };
            if v.is_nan() {
                return 0;
            }
            let i = if v >= hi as f64 {
                hi
            } else if v <= lo as f64 {
                lo
            } else {
                v as i128
            };
            let _ = sat;
            (i as u64) & mk
        }
        ConvOp::SToF => int_to_float(sext(x, fb) as i128, to, r),
        ConvOp::UToF => int_to_float(x as i128, to, r),
        ConvOp::UConv | ConvOp::SatUToS => {
            if sat {
                let hi = if op == ConvOp::SatUToS { smax } else { umax };
                ((x as i128).min(hi) as u64) & mk
            } else {
                x & mk
            }
        }
        ConvOp::SConv | ConvOp::SatSToU => {
            let v = sext(x, fb) as i128;
            if sat {
                let (lo, hi) = if op == ConvOp::SatSToU {
                    (0, umax)
                } else {
                    (smin, smax)
                };
                (v.clamp(lo, hi) as u64) & mk
            } else {
                (v as u64) & mk
            }
        }
        ConvOp::FConv => {
            let v = tof(x, from);
            match to {
                Sc::F32 => f64_to_f32(v, r).to_bits() as u64,
                Sc::F64 => v.to_bits(),
                Sc::F16 => f2h(f64_to_f32(v, r), r) as u64,
                _ => 0,
            }
        }
    }
}

pub(super) fn k2_bits_for_select(k: Sc) -> u32 {
    k.bits()
}

/// Error function (Abramowitz–Stegun 7.1.26 is too coarse; use a series/continued
/// fraction accurate to ~1e-15).
pub(super) fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let r = if ax < 2.5 {
        // Taylor series
        let mut sum = ax;
        let mut term = ax;
        let x2 = ax * ax;
        let mut k = 0.0;
        loop {
            k += 1.0;
            term *= -x2 / k;
            let t = term / (2.0 * k + 1.0);
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
            if k > 200.0 {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if ax < 30.0 {
        // continued fraction for erfc
        let mut f = 0.0;
        for k in (1..80).rev() {
            f = (k as f64 / 2.0) / (ax + f);
        }
        let erfc = (-ax * ax).exp() / (std::f64::consts::PI.sqrt() * (ax + f));
        1.0 - erfc
    } else {
        1.0
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// Gamma function (Lanczos approximation, g = 7, n = 9).
pub(super) fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x))
    } else {
        let x = x - 1.0;
        let mut a = G[0];
        let t = x + 7.5;
        for (i, g) in G.iter().enumerate().skip(1) {
            a += g / (x + i as f64);
        }
        (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn half_conversions() {
        for &f in &[
            0.0f32,
            1.0,
            -2.5,
            65504.0,
            6.1035156e-05,
            5.9604645e-08,
            0.333_333_34,
        ] {
            let h = f2h(f, Round::Rte);
            let back = h2f(h);
            assert!(
                (back - f).abs() <= f.abs() * 1e-3 + 1e-7,
                "{f} -> {h:x} -> {back}"
            );
        }
        assert_eq!(f2h(1.0, Round::Rte), 0x3c00);
        assert_eq!(f2h(-2.0, Round::Rte), 0xc000);
        assert_eq!(f2h(70000.0, Round::Rte), 0x7c00);
        assert_eq!(f2h(70000.0, Round::Rtz), 0x7bff);
    }
    #[test]
    fn conversions_saturate_and_round() {
        // float 300.7 -> uchar sat rtz = 255
        let x = (300.7f32).to_bits() as u64;
        assert_eq!(
            convert(ConvOp::FToU, Sc::F32, Sc::I8, x, true, Round::Default),
            255
        );
        let x = (-3.5f32).to_bits() as u64;
        assert_eq!(
            convert(ConvOp::FToS, Sc::F32, Sc::I32, x, false, Round::Rte),
            (-4i32) as u32 as u64
        );
        assert_eq!(
            convert(ConvOp::FToS, Sc::F32, Sc::I32, x, false, Round::Default),
            (-3i32) as u32 as u64
        );
        // int -300 -> char sat = -128
        assert_eq!(
            convert(
                ConvOp::SConv,
                Sc::I32,
                Sc::I8,
                (-300i32) as u32 as u64,
                true,
                Round::Default
            ),
            0x80
        );
    }
}
