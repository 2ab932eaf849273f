/* Black-Scholes European option pricing, one option per work-item.
 * Models AMD APP SDK BlackScholes (Boyer ch. 4, Table 4.3). The cumulative
 * normal distribution uses the Abramowitz-Stegun polynomial (eq. 26.2.17)
 * as in the SDK; the host reference uses the same polynomial in double. */
float cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
                A4 = -1.821255978f, A5 = 1.330274429f,
                RSQRT2PI = 0.39894228040143267794f;
    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) *
              (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0.0f ? 1.0f - c : c;
}

__kernel void blackscholes(__global const float *S, __global const float *X,
                           __global const float *T, __global float *call,
                           __global float *put, const float R, const float V)
{
    const uint i = get_global_id(0);
    const float s = S[i], x = X[i], t = T[i];
    const float sqrtT = sqrt(t);
    const float d1 = (log(s / x) + (R + 0.5f * V * V) * t) / (V * sqrtT);
    const float d2 = d1 - V * sqrtT;
    const float n1 = cnd(d1), n2 = cnd(d2);
    const float xexp = x * exp(-R * t);
    call[i] = s * n1 - xexp * n2;
    put[i] = xexp * (1.0f - n2) - s * (1.0f - n1);
}
