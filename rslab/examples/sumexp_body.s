# The sum-exp loop of the pipelining chapter, one iteration: s += exp2((l - m) * log2 e)
# over two packed BF16 vectors (four float32 vectors), with four worker accumulators.
# Live-ins: s1 the row (packed BF16 in VMEM), v60 the row max m, v61 log2 e.
# rslab pipeline examples/sumexp_body.s -o examples/sumexp.s ; rslab sim examples/sumexp.s

iterations 32                         # 64 packed vectors = 16,384 logits
carried acc0=v50 acc1=v51 acc2=v52 acc3=v53
registers v0-v47

before: sli s1, 0                     # the row at VMEM byte 0
before: sli s2, 0x0                   # m = 0.0 (float32 bits); put the row max here
before: vbcast v60, s2 ; vli v61, 0x3fb8aa3b
before: vli v50, 0 ; vli v51, 0
before: vli v52, 0 ; vli v53, 0

x0 = vld [s1 + 0 + 1024*i]            # packed vector 2i
x1 = vld [s1 + 512 + 1024*i]          # packed vector 2i + 1
l0 = vunpack.lo x0
z0 = vsub.f32 l0, v60
y0 = vmul.f32 z0, v61
@e0 = vexp2 y0                        # push to the SFU ...
e0 = vpop @e0                         # ... and pop its result
l1 = vunpack.hi x0
z1 = vsub.f32 l1, v60
y1 = vmul.f32 z1, v61
@e1 = vexp2 y1
e1 = vpop @e1
l2 = vunpack.lo x1
z2 = vsub.f32 l2, v60
y2 = vmul.f32 z2, v61
@e2 = vexp2 y2
e2 = vpop @e2
l3 = vunpack.hi x1
z3 = vsub.f32 l3, v60
y3 = vmul.f32 z3, v61
@e3 = vexp2 y3
e3 = vpop @e3
acc0 = vadd.f32 acc0[-1], e0          # worker w: acc_w of the previous iteration + e_w
acc1 = vadd.f32 acc1[-1], e1
acc2 = vadd.f32 acc2[-1], e2
acc3 = vadd.f32 acc3[-1], e3

after: vadd.f32 v56, v50, v51 ; vadd.f32 v57, v52, v53
after: vadd.f32 v58, v56, v57
after: vred.add s3, v58               # the sum, as float32 bits
