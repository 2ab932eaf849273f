//! OpenCL.std extended instructions (`Inst::Ext`): math, integer and geometric built-ins.

use super::*;

/// The operands of one `Inst::Ext` as the element-wise loops use them: warp width `w`,
/// active `mask`, `n` components, destination slot `d`, argument slots `a` and their
/// component strides `s` (0: a scalar broadcast to every component), element kinds `k`
/// (result, first argument) and `k2` (second argument), and `k`'s width in `bits`, its
/// value mask `mk` and whether it is a single- or half-precision float (`is32`).
#[derive(Clone, Copy)]
pub(super) struct ExtArgs {
    w: usize,
    mask: u64,
    n: usize,
    d: usize,
    a: [usize; 3],
    s: [usize; 3],
    k: Sc,
    k2: Sc,
    bits: u32,
    mk: u64,
    is32: bool,
}

impl<'m> Machine<'m> {
    /// Executes OpenCL.std function `op` on the active lanes of `wp` (see [`ExtArgs`] for
    /// the operands), by group: float functions, pointer-output and geometric ones, then
    /// integer ones.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_ext(
        &mut self,
        wp: &mut Warp,
        mask: u64,
        op: spirv::CLOp,
        k: Sc,
        n: usize,
        d: usize,
        args: [u32; 3],
        k2: Sc,
        bcast: u8,
    ) -> Result<(), EmuError> {
        let [a0, a1, a2] = args.map(|x| x as usize);
        // component stride of each argument (0 = scalar broadcast)
        let (s0, s1, s2) = (
            (bcast & 1 == 0) as usize,
            (bcast & 2 == 0) as usize,
            (bcast & 4 == 0) as usize,
        );
        let bits = k.bits();
        let mk = mask_bits(bits);
        let is32 = k == Sc::F32 || k == Sc::F16;
        let e = ExtArgs {
            w: self.w,
            mask,
            n,
            d,
            a: [a0, a1, a2],
            s: [s0, s1, s2],
            k,
            k2,
            bits,
            mk,
            is32,
        };
        if self.ext_float(wp, &e, op)?
            || self.ext_float_more(wp, &e, op)?
            || self.ext_pointer_geometric(wp, &e, op)?
        {
            return Ok(());
        }
        self.ext_integer(wp, &e, op)
    }

    /// Float functions, `acos` to `minmag`.
    fn ext_float(&mut self, wp: &mut Warp, e: &ExtArgs, op: spirv::CLOp) -> Result<bool, EmuError> {
        use spirv::CLOp as C;
        let ExtArgs {
            w,
            mask,
            n,
            d,
            a: [a0, a1, a2],
            s: [s0, s1, s2],
            k,
            k2,
            ..
        } = *e;
        // Single-precision results are computed in double precision and rounded once, which
        // is within OpenCL's ULP bounds for every function (OpenCL 1.2 §7.4).
        let f1 = |f: &dyn Fn(f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x), k);
                });
            }
        };
        let f2 = |f: &dyn Fn(f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y), k);
                });
            }
        };
        // Second argument may be a scalar broadcast (e.g. fmax(float4, float)) — the
        // front end splats these, so vectors are assumed here.
        let f3 = |f: &dyn Fn(f64, f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    let z = tof(regs[(a2 + j * s2) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y, z), k);
                });
            }
        };
        let pi = std::f64::consts::PI;
        let r = &mut wp.regs;
        match op {
            C::acos => f1(&|x| x.acos(), r),
            C::acosh => f1(&|x| x.acosh(), r),
            C::acospi => f1(&|x| x.acos() / pi, r),
            C::asin => f1(&|x| x.asin(), r),
            C::asinh => f1(&|x| x.asinh(), r),
            C::asinpi => f1(&|x| x.asin() / pi, r),
            C::atan => f1(&|x| x.atan(), r),
            C::atan2 => f2(&|y, x| y.atan2(x), r),
            C::atanh => f1(&|x| x.atanh(), r),
            C::atanpi => f1(&|x| x.atan() / pi, r),
            C::atan2pi => f2(&|y, x| y.atan2(x) / pi, r),
            C::cbrt => f1(&|x| x.cbrt(), r),
            C::ceil => f1(&|x| x.ceil(), r),
            C::copysign => f2(&|x, y| x.copysign(y), r),
            C::cos | C::native_cos | C::half_cos => f1(&|x| x.cos(), r),
            C::cosh => f1(&|x| x.cosh(), r),
            C::cospi => f1(&|x| (x * pi).cos(), r),
            C::erfc => f1(&|x| 1.0 - erf(x), r),
            C::erf => f1(&erf, r),
            C::exp | C::native_exp | C::half_exp => f1(&|x| x.exp(), r),
            C::exp2 | C::native_exp2 | C::half_exp2 => f1(&|x| x.exp2(), r),
            C::exp10 | C::native_exp10 | C::half_exp10 => f1(&|x| 10f64.powf(x), r),
            C::expm1 => f1(&|x| x.exp_m1(), r),
            C::fabs => f1(&|x| x.abs(), r),
            C::fdim => f2(
                &|x, y| {
                    if x > y {
                        x - y
                    } else if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else {
                        0.0
                    }
                },
                r,
            ),
            C::floor => f1(&|x| x.floor(), r),
            // mad: llvm-spirv emits it for llvm.fmuladd (contracted a*b+c); GPUs and PoCL
            // fuse it, so it is computed as a fused multiply-add with a single rounding.
            C::fma | C::mad => {
                if k == Sc::F32 {
                    f3(&|x, y, z| (x as f32).mul_add(y as f32, z as f32) as f64, r)
                } else {
                    f3(&|x, y, z| x.mul_add(y, z), r)
                }
            }
            C::fmax | C::fmax_common => f2(&|x, y| x.max(y), r),
            C::fmin | C::fmin_common => f2(&|x, y| x.min(y), r),
            C::fmod => f2(&|x, y| x % y, r),
            C::hypot => f2(&|x, y| x.hypot(y), r),
            C::ilogb => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let x = tof(r[(a0 + j * s0) * w + l], k2);
                        let v: i32 = if x == 0.0 {
                            i32::MIN
                        } else if x.is_nan() || x.is_infinite() {
                            i32::MAX
                        } else {
                            x.abs().log2().floor() as i32
                        };
                        r[(d + j) * w + l] = v as u32 as u64;
                    });
                }
            }
            C::ldexp | C::pown | C::rootn => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        let e = sext(r[(a1 + j * s1) * w + l], k2.bits());
                        let v = match op {
                            C::ldexp => x * 2f64.powi(e.clamp(-2000, 2000) as i32),
                            C::pown => x.powi(e.clamp(i32::MIN as i64, i32::MAX as i64) as i32),
                            _ => {
                                if e == 0 {
                                    f64::NAN
                                } else if x < 0.0 && e % 2 != 0 {
                                    -(-x).powf(1.0 / e as f64)
                                } else {
                                    x.powf(1.0 / e as f64)
                                }
                            }
                        };
                        r[(d + j) * w + l] = fromf(v, k);
                    });
                }
            }
            C::log | C::native_log | C::half_log => f1(&|x| x.ln(), r),
            C::log2 | C::native_log2 | C::half_log2 => f1(&|x| x.log2(), r),
            C::log10 | C::native_log10 | C::half_log10 => f1(&|x| x.log10(), r),
            C::log1p => f1(&|x| x.ln_1p(), r),
            C::logb => f1(
                &|x| {
                    if x == 0.0 {
                        f64::NEG_INFINITY
                    } else if x.is_infinite() {
                        f64::INFINITY
                    } else {
                        x.abs().log2().floor()
                    }
                },
                r,
            ),
            C::maxmag => f2(
                &|x, y| {
                    if x.abs() > y.abs() {
                        x
                    } else if y.abs() > x.abs() {
                        y
                    } else {
                        x.max(y)
                    }
                },
                r,
            ),
            C::minmag => f2(
                &|x, y| {
                    if x.abs() < y.abs() {
                        x
                    } else if y.abs() < x.abs() {
                        y
                    } else {
                        x.min(y)
                    }
                },
                r,
            ),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Float functions, `nan` to `sign`.
    fn ext_float_more(
        &mut self,
        wp: &mut Warp,
        e: &ExtArgs,
        op: spirv::CLOp,
    ) -> Result<bool, EmuError> {
        use spirv::CLOp as C;
        let ExtArgs {
            w,
            mask,
            n,
            d,
            a: [a0, a1, a2],
            s: [s0, s1, s2],
            k,
            ..
        } = *e;
        // Single-precision results are computed in double precision and rounded once, which
        // is within OpenCL's ULP bounds for every function (OpenCL 1.2 §7.4).
        let f1 = |f: &dyn Fn(f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x), k);
                });
            }
        };
        let f2 = |f: &dyn Fn(f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y), k);
                });
            }
        };
        // Second argument may be a scalar broadcast (e.g. fmax(float4, float)) — the
        // front end splats these, so vectors are assumed here.
        let f3 = |f: &dyn Fn(f64, f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    let z = tof(regs[(a2 + j * s2) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y, z), k);
                });
            }
        };
        let pi = std::f64::consts::PI;
        let r = &mut wp.regs;
        match op {
            C::nan => {
                for j in 0..n {
                    lanes!(mask, l, {
                        r[(d + j) * w + l] = match k {
                            Sc::F64 => 0x7ff8_0000_0000_0000,
                            Sc::F16 => 0x7e00,
                            _ => 0x7fc0_0000,
                        };
                    });
                }
            }
            C::nextafter => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let xv = r[(a0 + j * s0) * w + l];
                        let yv = r[(a1 + j * s1) * w + l];
                        r[(d + j) * w + l] = if k == Sc::F64 {
                            let (x, y) = (f64::from_bits(xv), f64::from_bits(yv));
                            (if x.is_nan() || y.is_nan() {
                                f64::NAN
                            } else if x < y {
                                x.next_up()
                            } else if x > y {
                                x.next_down()
                            } else {
                                y
                            })
                            .to_bits()
                        } else {
                            let (x, y) = (f32::from_bits(xv as u32), f32::from_bits(yv as u32));
                            (if x.is_nan() || y.is_nan() {
                                f32::NAN
                            } else if x < y {
                                x.next_up()
                            } else if x > y {
                                x.next_down()
                            } else {
                                y
                            })
                            .to_bits() as u64
                        };
                    });
                }
            }
            C::pow | C::powr | C::native_powr | C::half_powr => f2(&|x, y| x.powf(y), r),
            C::remainder => f2(
                &|x, y| {
                    let q = (x / y).round_ties_even();
                    x - q * y
                },
                r,
            ),
            C::rint => f1(&|x| x.round_ties_even(), r),
            C::round => f1(&|x| x.round(), r),
            C::rsqrt | C::native_rsqrt | C::half_rsqrt => f1(&|x| 1.0 / x.sqrt(), r),
            C::sin | C::native_sin | C::half_sin => f1(&|x| x.sin(), r),
            C::sinh => f1(&|x| x.sinh(), r),
            C::sinpi => f1(&|x| (x * pi).sin(), r),
            C::sqrt | C::native_sqrt | C::half_sqrt => f1(&|x| x.sqrt(), r),
            C::tan | C::native_tan | C::half_tan => f1(&|x| x.tan(), r),
            C::tanh => f1(&|x| x.tanh(), r),
            C::tanpi => f1(&|x| (x * pi).tan(), r),
            C::tgamma => f1(&gamma, r),
            C::lgamma => f1(&|x| gamma(x).abs().ln(), r),
            C::trunc => f1(&|x| x.trunc(), r),
            C::half_divide | C::native_divide => f2(&|x, y| x / y, r),
            C::half_recip | C::native_recip => f1(&|x| 1.0 / x, r),
            C::fclamp => f3(&|x, lo, hi| x.max(lo).min(hi), r),
            C::degrees => f1(&|x| x * (180.0 / pi), r),
            C::radians => f1(&|x| x * (pi / 180.0), r),
            C::mix => f3(&|x, y, a| x + (y - x) * a, r),
            C::step => f2(&|e, x| if x < e { 0.0 } else { 1.0 }, r),
            C::smoothstep => f3(
                &|e0, e1, x| {
                    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
                    t * t * (3.0 - 2.0 * t)
                },
                r,
            ),
            C::sign => f1(
                &|x| {
                    if x.is_nan() {
                        0.0
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        x
                    }
                },
                r,
            ),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Functions with a pointer output (`fract`, `modf`, `sincos`, `frexp`, `lgamma_r`, `remquo`) and the geometric ones.
    fn ext_pointer_geometric(
        &mut self,
        wp: &mut Warp,
        e: &ExtArgs,
        op: spirv::CLOp,
    ) -> Result<bool, EmuError> {
        use spirv::CLOp as C;
        let ExtArgs {
            w,
            mask,
            n,
            d,
            a: [a0, a1, a2],
            s: [s0, s1, _],
            k,
            is32,
            ..
        } = *e;
        let r = &mut wp.regs;
        match op {
            C::fract | C::modf | C::sincos | C::frexp | C::lgamma_r | C::remquo => {
                // (x[, y], ptr): result + a value stored through the pointer
                let pa = if op == C::remquo { a2 } else { a1 };
                let esz = if op == C::frexp || op == C::lgamma_r || op == C::remquo {
                    4u64
                } else {
                    k.bytes() as u64
                };
                lanes!(mask, l, {
                    let ptr = r[pa * w + l];
                    let mut outs = Vec::with_capacity(n);
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        let (res, side): (f64, u64) = match op {
                            C::fract => {
                                let fl = x.floor();
                                let fr = if x.is_nan() {
                                    x
                                } else {
                                    (x - fl).min(if is32 {
                                        f32::from_bits(0x3f7f_ffff) as f64
                                    } else {
                                        f64::from_bits(0x3fef_ffff_ffff_ffff)
                                    })
                                };
                                (fr, fromf(fl, k))
                            }
                            C::modf => {
                                let t = x.trunc();
                                (
                                    if x.is_infinite() {
                                        0.0f64.copysign(x)
                                    } else {
                                        x - t
                                    },
                                    fromf(t, k),
                                )
                            }
                            C::sincos => (x.sin(), fromf(x.cos(), k)),
                            C::frexp => {
                                if x == 0.0 || !x.is_finite() {
                                    (x, 0)
                                } else {
                                    let e = x.abs().log2().floor() as i32 + 1;
                                    let mut m = x / 2f64.powi(e);
                                    let mut e = e;
                                    if m.abs() >= 1.0 {
                                        m /= 2.0;
                                        e += 1;
                                    }
                                    if m.abs() < 0.5 {
                                        m *= 2.0;
                                        e -= 1;
                                    }
                                    (m, e as u32 as u64)
                                }
                            }
                            C::remquo => {
                                let y = tof(r[(a1 + j * s1) * w + l], k);
                                let q = (x / y).round_ties_even();
                                let qi =
                                    (q.abs() as i64 % 128) as i32 * if q < 0.0 { -1 } else { 1 };
                                (x - q * y, qi as u32 as u64)
                            }
                            _ => {
                                let g = gamma(x);
                                (
                                    g.abs().ln(),
                                    if g < 0.0 { (-1i32) as u32 as u64 } else { 1 },
                                )
                            }
                        };
                        r[(d + j) * w + l] = fromf(res, k);
                        outs.push(side);
                    }
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, esz * n as u64)?;
                    for (j, v) in outs.iter().enumerate() {
                        let kk = if esz == 4 { Sc::I32 } else { k };
                        wr(&mut sl[j * esz as usize..], kk, *v);
                    }
                });
                self.mem_stats(mask, esz * n as u64, true);
            }
            C::cross => {
                lanes!(mask, l, {
                    let g = |s: usize, j: usize| tof(r[(s + j) * w + l], k);
                    let (x0, x1, x2) = (g(a0, 0), g(a0, 1), g(a0, 2));
                    let (y0, y1, y2) = (g(a1, 0), g(a1, 1), g(a1, 2));
                    let v = [x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0, 0.0];
                    for (j, vv) in v.iter().enumerate().take(n) {
                        r[(d + j) * w + l] = fromf(*vv, k);
                    }
                });
            }
            C::distance | C::fast_distance | C::length | C::fast_length => {
                lanes!(mask, l, {
                    let mut s = 0f64;
                    for j in 0..n {
                        let mut x = tof(r[(a0 + j * s0) * w + l], k);
                        if matches!(op, C::distance | C::fast_distance) {
                            x -= tof(r[(a1 + j * s1) * w + l], k);
                        }
                        s += x * x;
                    }
                    r[d * w + l] = fromf(s.sqrt(), k);
                });
            }
            C::normalize | C::fast_normalize => {
                lanes!(mask, l, {
                    let mut s = 0f64;
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        s += x * x;
                    }
                    let len = s.sqrt();
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        r[(d + j) * w + l] = fromf(if len == 0.0 { x } else { x / len }, k);
                    }
                });
            }
            // Integer built-ins.
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Integer functions (and `bitselect`, `select`); any other `op` is unsupported.
    fn ext_integer(&mut self, wp: &mut Warp, e: &ExtArgs, op: spirv::CLOp) -> Result<(), EmuError> {
        use spirv::CLOp as C;
        let ExtArgs {
            w,
            mask,
            n,
            d,
            a: [a0, a1, a2],
            s: [s0, s1, s2],
            k,
            k2,
            bits,
            mk,
            ..
        } = *e;
        let i1 = |f: &dyn Fn(u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    regs[(d + j) * w + l] = f(x) & mk;
                });
            }
        };
        let i2 = |f: &dyn Fn(u64, u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    let y = regs[(a1 + j * s1) * w + l];
                    regs[(d + j) * w + l] = f(x, y) & mk;
                });
            }
        };
        let i3 = |f: &dyn Fn(u64, u64, u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    let y = regs[(a1 + j * s1) * w + l];
                    let z = regs[(a2 + j * s2) * w + l];
                    regs[(d + j) * w + l] = f(x, y, z) & mk;
                });
            }
        };
        let sx = |x: u64| sext(x, bits) as i128;
        let ux = |x: u64| (x & mk) as i128;
        let smin = -(1i128 << (bits - 1));
        let smax = (1i128 << (bits - 1)) - 1;
        let umax = mk as i128;
        let r = &mut wp.regs;
        match op {
            C::s_abs => i1(&|x| sx(x).unsigned_abs() as u64, r),
            C::u_abs => i1(&|x| x, r),
            C::s_abs_diff => i2(&|x, y| (sx(x) - sx(y)).unsigned_abs() as u64, r),
            C::u_abs_diff => i2(&|x, y| (ux(x) - ux(y)).unsigned_abs() as u64, r),
            C::s_add_sat => i2(&|x, y| (sx(x) + sx(y)).clamp(smin, smax) as u64, r),
            C::u_add_sat => i2(&|x, y| (ux(x) + ux(y)).min(umax) as u64, r),
            C::s_sub_sat => i2(&|x, y| (sx(x) - sx(y)).clamp(smin, smax) as u64, r),
            C::u_sub_sat => i2(&|x, y| (ux(x) - ux(y)).max(0) as u64, r),
            C::s_hadd => i2(&|x, y| ((sx(x) + sx(y)) >> 1) as u64, r),
            C::u_hadd => i2(&|x, y| ((ux(x) + ux(y)) >> 1) as u64, r),
            C::s_rhadd => i2(&|x, y| ((sx(x) + sx(y) + 1) >> 1) as u64, r),
            C::u_rhadd => i2(&|x, y| ((ux(x) + ux(y) + 1) >> 1) as u64, r),
            C::s_clamp => i3(&|x, lo, hi| sx(x).max(sx(lo)).min(sx(hi)) as u64, r),
            C::u_clamp => i3(&|x, lo, hi| ux(x).max(ux(lo)).min(ux(hi)) as u64, r),
            C::clz => i1(&|x| ((x & mk).leading_zeros() - (64 - bits)) as u64, r),
            C::ctz => i1(
                &|x| {
                    if x & mk == 0 {
                        bits as u64
                    } else {
                        (x & mk).trailing_zeros() as u64
                    }
                },
                r,
            ),
            C::s_mad_hi => i3(&|x, y, z| (((sx(x) * sx(y)) >> bits) + sx(z)) as u64, r),
            C::u_mad_hi => i3(
                &|x, y, z| (((ux(x) as u128 * ux(y) as u128) >> bits) as i128 + ux(z)) as u64,
                r,
            ),
            C::s_mul_hi => i2(&|x, y| ((sx(x) * sx(y)) >> bits) as u64, r),
            C::u_mul_hi => i2(&|x, y| ((ux(x) as u128 * ux(y) as u128) >> bits) as u64, r),
            C::u_mad_sat => i3(
                &|x, y, z| (ux(x) as u128 * ux(y) as u128 + ux(z) as u128).min(umax as u128) as u64,
                r,
            ),
            C::s_mad_sat => i3(
                &|x, y, z| {
                    (sx(x).saturating_mul(sx(y)).saturating_add(sx(z))).clamp(smin, smax) as u64
                },
                r,
            ),
            C::s_max => i2(&|x, y| sx(x).max(sx(y)) as u64, r),
            C::u_max => i2(&|x, y| ux(x).max(ux(y)) as u64, r),
            C::s_min => i2(&|x, y| sx(x).min(sx(y)) as u64, r),
            C::u_min => i2(&|x, y| ux(x).min(ux(y)) as u64, r),
            C::rotate => i2(
                &|x, y| {
                    let s = (y % bits as u64) as u32;
                    if s == 0 {
                        x
                    } else {
                        ((x << s) | ((x & mk) >> (bits - s))) & mk
                    }
                },
                r,
            ),
            C::u_upsample | C::s_upsample => {
                // result type is twice as wide: hi << (bits/2) | lo
                let hb = bits / 2;
                i2(&|h, lo| (h << hb) | (lo & mask_bits(hb)), r)
            }
            C::popcount => i1(&|x| (x & mk).count_ones() as u64, r),
            C::s_mad24 => i3(
                &|x, y, z| ((sext(x, 24) as i128) * (sext(y, 24) as i128) + sx(z)) as u64,
                r,
            ),
            C::u_mad24 => i3(
                &|x, y, z| ((x & 0xff_ffff) * (y & 0xff_ffff)).wrapping_add(z),
                r,
            ),
            C::s_mul24 => i2(
                &|x, y| ((sext(x, 24) as i128) * (sext(y, 24) as i128)) as u64,
                r,
            ),
            C::u_mul24 => i2(&|x, y| (x & 0xff_ffff) * (y & 0xff_ffff), r),
            C::bitselect => {
                if k.is_float() {
                    i3(&|a, b, c| (a & !c) | (b & c), r)
                } else {
                    i3(&|a, b, c| (a & !c) | (b & c), r)
                }
            }
            C::select => {
                // select(a, b, c): scalar: c ? b : a; vector: MSB of c
                let cb = k2_bits_for_select(k2);
                let vecsel = n > 1;
                for j in 0..n {
                    lanes!(mask, l, {
                        let a = r[(a0 + j * s0) * w + l];
                        let b = r[(a1 + j * s1) * w + l];
                        let c = r[(a2 + j * s2) * w + l];
                        let t = if vecsel {
                            (c >> (cb - 1)) & 1 != 0
                        } else {
                            c & mask_bits(cb) != 0
                        };
                        r[(d + j) * w + l] = if t { b } else { a };
                    });
                }
            }
            other => return Err(EmuError::Unsupported(format!("OpenCL.std {other:?}"))),
        }
        Ok(())
    }
}
