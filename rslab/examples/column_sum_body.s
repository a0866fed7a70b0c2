# A column sum of a row-major 128 x 128 float32 matrix: iteration i loads column i with a
# lane stride of 128 words, so all 128 lanes fall in one of the 128 banks: a 128-way bank
# conflict that holds the load port 128 cycles (rslab pipeline books it: II 128).
# rslab pipeline --example column_sum_body -o colsum.s ; rslab sim colsum.s --regs s3

iterations 64
carried acc=v50
before: sli s1, 0                     # the matrix at VMEM byte 0
before: vli v50, 0
after: vred.add s3, v50               # the sum of the first 64 columns

x = vld.s [s1 + 0 + 4*i], 128         # lane l: row l of column i
acc = vadd.f32 acc[-1], x
