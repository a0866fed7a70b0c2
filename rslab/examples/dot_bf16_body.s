# A BF16 dot product, one iteration: acc += a_k * b_k over one packed vector of each row
# (256 BF16 elements, as two float32 vectors: elements l and l + 128 of lane l).
# Rows a at VMEM byte 0 and b at byte 65536 (64 packed vectors each, 16,384 elements).
# rslab pipeline --example dot_bf16_body -o dot.s ; rslab sim dot.s --timeline 0:40

iterations 64
carried acc=v50
before: sli s1, 0                     # row a
before: sli s2, 65536                 # row b
before: vli v50, 0                    # acc = 0.0
after:  vred.add s3, v50              # the dot product, as float32 bits in s3

xa = vld [s1 + 0 + 512*i]
xb = vld [s2 + 0 + 512*i]
alo = vunpack.lo xa
ahi = vunpack.hi xa
blo = vunpack.lo xb
bhi = vunpack.hi xb
plo = vmul.f32 alo, blo
phi = vmul.f32 ahi, bhi
p = vadd.f32 plo, phi
acc = vadd.f32 acc[-1], p
