# machine: default
sli s1, 0
sli s2, 0x0
vbcast v60, s2 ; vli v61, 0x3fb8aa3b
vli v50, 0 ; vli v51, 0
vli v52, 0 ; vli v53, 0
vld v1, [s1 + 0]
vld v5, [s1 + 512]
nop
nop
vunpack.lo v1, v1 ; vunpack.hi v6, v1
vunpack.lo v0, v5 ; vunpack.hi v5, v5
nop
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60
nop
vld v1, [s1 + 1024] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61
vld v5, [s1 + 1536] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61
nop
vexp2 v2
vunpack.lo v1, v1 ; vunpack.hi v6, v1
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5
nop
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60
vexp2 v3
vld v1, [s1 + 2048] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61
vld v5, [s1 + 2560] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61
nop
vexp2 v2
vunpack.lo v1, v1 ; vunpack.hi v6, v1
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5
vpop v2
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2
loop 29  # 1 source iteration per pass
vld v1, [s1 + 3072] ; vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61
vld v5, [s1 + 3584] ; vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61
vpop v6 ; vadd.f32 v51, v51, v7
vexp2 v2 ; vpop v2 ; vadd.f32 v52, v52, v6
vunpack.lo v1, v1 ; vunpack.hi v6, v1
vexp2 v0 ; vunpack.lo v0, v5 ; vunpack.hi v5, v5
vpop v2 ; vadd.f32 v53, v53, v2
vsub.f32 v1, v1, v60 ; vsub.f32 v4, v6, v60 ; vexp2 v4
vsub.f32 v5, v0, v60 ; vsub.f32 v6, v5, v60
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2 ; sadd s1, s1, 1024
endloop
vmul.f32 v2, v1, v61 ; vmul.f32 v0, v4, v61
vmul.f32 v4, v5, v61 ; vmul.f32 v3, v6, v61
vpop v6 ; vadd.f32 v51, v51, v7
vexp2 v2 ; vpop v2 ; vadd.f32 v52, v52, v6
nop
vexp2 v0
vpop v2 ; vadd.f32 v53, v53, v2
vexp2 v4
nop
vpop v7 ; vexp2 v3 ; vadd.f32 v50, v50, v2
nop
nop
vpop v6 ; vadd.f32 v51, v51, v7
vpop v2 ; vadd.f32 v52, v52, v6
nop
nop
vpop v2 ; vadd.f32 v53, v53, v2
nop
nop
vpop v7 ; vadd.f32 v50, v50, v2
nop
nop
vpop v6 ; vadd.f32 v51, v51, v7
vpop v2 ; vadd.f32 v52, v52, v6
nop
nop
vadd.f32 v53, v53, v2
vadd.f32 v56, v50, v51 ; vadd.f32 v57, v52, v53
vadd.f32 v58, v56, v57
vred.add s3, v58
halt
