# Online softmax, one iteration: the running max m and the running sum s of exp(x - m),
# rescaled by exp(m_old - m) whenever the max grows (one pass over the row, no max pass).
# m[-1] is the max before this vector, m the max after it: d = m[-1] - m reads both.
# rslab pipeline --example online_softmax_body -o online.s ; rslab sim online.s --regs s3,s4

iterations 48
carried m=v50 s=v51
before: sli s1, 0                     # the row: 48 vectors of 128 float32 at VMEM byte 0
before: vli v50, -inf ; vli v51, 0    # m = -inf, s = 0
before: vli v61, 0x3fb8aa3b           # log2 e
after: vred.max s3, v50               # the row's max ...
after: vred.add s4, v51               # ... and its sum of exp(x - max), per lane then summed

x = vld [s1 + 0 + 512*i]
m = vmax.f32 m[-1], x
d = vsub.f32 m[-1], m                 # <= 0: how much the max grew
dl = vmul.f32 d, v61
@c = vexp2 dl                         # c = exp(m_old - m), the rescale
z = vsub.f32 x, m
zl = vmul.f32 z, v61
@e = vexp2 zl                         # e = exp(x - m)
c = vpop @c
e = vpop @e
sc = vmul.f32 s[-1], c
s = vadd.f32 sc, e                    # the recurrence: sc -> s, 3 + 3 cycles an iteration
