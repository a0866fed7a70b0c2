# machine: default
sli s1, 0
sli s2, 0x0
vbcast v60, s2 ; vli v61, 0x3fb8aa3b
vli v50, 0 ; vli v51, 0
vli v52, 0 ; vli v53, 0
vld v1, [s1 + 0]  #@ x0 i0 s0
vld v5, [s1 + 512]  #@ x1 i0 s0
nop
nop
vunpack.lo v1, v1 ; vunpack.hi v6, v1  #@ l0 i0 s0 ; l1 i0 s0
vunpack.lo v0, v5 ; vunpack.hi v5, v5  #@ l2 i0 s0 ; l3 i0 s0
nop
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60  #@ z0 i0 s0 ; z1 i0 s0
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60  #@ z2 i0 s0 ; z3 i0 s0
nop
vld v1, [s1 + 1024] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61  #@ x0 i1 s0 ; y0 i0 s1 ; y1 i0 s1
vld v5, [s1 + 1536] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61  #@ x1 i1 s0 ; y2 i0 s1 ; y3 i0 s1
nop
vexp2 v2  #@ @e0 i0 s1
vunpack.lo v1, v1 ; vunpack.hi v6, v1  #@ l0 i1 s0 ; l1 i1 s0
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5  #@ @e1 i0 s1 ; l2 i1 s0 ; l3 i1 s0
nop
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4  #@ z0 i1 s0 ; z1 i1 s0 ; @e2 i0 s1
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60  #@ z2 i1 s0 ; z3 i1 s0
vexp2 v3  #@ @e3 i0 s1
vld v1, [s1 + 2048] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61  #@ x0 i2 s0 ; y0 i1 s1 ; y1 i1 s1
vld v5, [s1 + 2560] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61  #@ x1 i2 s0 ; y2 i1 s1 ; y3 i1 s1
nop
vexp2 v2  #@ @e0 i1 s1
vunpack.lo v1, v1 ; vunpack.hi v6, v1  #@ l0 i2 s0 ; l1 i2 s0
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5  #@ @e1 i1 s1 ; l2 i2 s0 ; l3 i2 s0
vpop v2  #@ e0 i0 s2
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4  #@ z0 i2 s0 ; z1 i2 s0 ; @e2 i1 s1
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60  #@ z2 i2 s0 ; z3 i2 s0
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2  #@ e1 i0 s2 ; @e3 i1 s1 ; acc0 i0 s2
loop 29  # 1 source iteration per pass
vld v1, [s1 + 3072] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61  #@ x0 i3 s0 ; y0 i2 s1 ; y1 i2 s1
vld v5, [s1 + 3584] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61  #@ x1 i3 s0 ; y2 i2 s1 ; y3 i2 s1
vpop v6 ; vadd.f32 v51, v51, v7  #@ e2 i0 s3 ; acc1 i0 s3
vexp2 v2 ; vpop v2 ; vadd.f32 v52, v52, v6  #@ @e0 i2 s1 ; e3 i0 s3 ; acc2 i0 s3
vunpack.lo v1, v1 ; vunpack.hi v6, v1  #@ l0 i3 s0 ; l1 i3 s0
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5  #@ @e1 i2 s1 ; l2 i3 s0 ; l3 i3 s0
vpop v2 ; vadd.f32 v53, v53, v2  #@ e0 i1 s2 ; acc3 i0 s3
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4  #@ z0 i3 s0 ; z1 i3 s0 ; @e2 i2 s1
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60  #@ z2 i3 s0 ; z3 i3 s0
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2 ; sadd s1, s1, 1024  #@ e1 i1 s2 ; @e3 i2 s1 ; acc0 i1 s2 ; -
endloop
vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61  #@ y0 i31 s1 ; y1 i31 s1
vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61  #@ y2 i31 s1 ; y3 i31 s1
vpop v6 ; vadd.f32 v51, v51, v7  #@ e2 i29 s3 ; acc1 i29 s3
vexp2 v2 ; vpop v2 ; vadd.f32 v52, v52, v6  #@ @e0 i31 s1 ; e3 i29 s3 ; acc2 i29 s3
nop
vexp2 v0  #@ @e1 i31 s1
vpop v2 ; vadd.f32 v53, v53, v2  #@ e0 i30 s2 ; acc3 i29 s3
vexp2 v4  #@ @e2 i31 s1
nop
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2  #@ e1 i30 s2 ; @e3 i31 s1 ; acc0 i30 s2
nop
nop
vpop v6 ; vadd.f32 v51, v51, v7  #@ e2 i30 s3 ; acc1 i30 s3
vpop v2 ; vadd.f32 v52, v52, v6  #@ e3 i30 s3 ; acc2 i30 s3
nop
nop
vpop v2 ; vadd.f32 v53, v53, v2  #@ e0 i31 s2 ; acc3 i30 s3
nop
nop
vpop v7 ; vadd.f32 v50, v50, v2  #@ e1 i31 s2 ; acc0 i31 s2
nop
nop
vpop v6 ; vadd.f32 v51, v51, v7  #@ e2 i31 s3 ; acc1 i31 s3
vpop v2 ; vadd.f32 v52, v52, v6  #@ e3 i31 s3 ; acc2 i31 s3
nop
nop
vadd.f32 v53, v53, v2  #@ acc3 i31 s3
vadd.f32 v56, v50, v51 ; vadd.f32 v57, v52, v53
vadd.f32 v58, v56, v57
vred.add s3, v58
halt
