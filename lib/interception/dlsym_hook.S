/*
 * The exported dlsym (both glibc symbol versions programs bind to: GLIBC_2.2.5, used by cudart and
 * by anything built against glibc < 2.34, and GLIBC_2.34).
 *
 * Why assembly: glibc resolves RTLD_NEXT (and RTLD_DEFAULT from an RTLD_LOCAL library) relative to
 * the *caller's* return address. For every name we do not wrap, we must reach the real dlsym with
 * the caller's return address still on the stack, i.e. by a guaranteed tail jump. C++ cannot promise
 * a tail call (gcc 12 has no musttail), so this stub asks vt_dlsym_route whether the name is one of
 * ours, restores the arguments and jumps: either to glibc's dlsym (through vt_real_dlsym_slot, which
 * vt_dlsym_route fills) or to vt_dlsym_wrapped. x86-64 System V only.
 */
    .text
    .p2align 4
    .globl vt_dlsym_entry

    .type vt_dlsym_entry, @function
    .globl vt_dlsym_entry_compat

    .type vt_dlsym_entry_compat, @function
    .symver vt_dlsym_entry, dlsym@@GLIBC_2.34
    .symver vt_dlsym_entry_compat, dlsym@GLIBC_2.2.5
vt_dlsym_entry:
vt_dlsym_entry_compat:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp                 /* keep %rsp 16-byte aligned at the call */
    .cfi_adjust_cfa_offset 8
    movq %rsi, %rdi               /* vt_dlsym_route(name) */
    call vt_dlsym_route
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testl %eax, %eax
    jnz 1f
    jmp *vt_real_dlsym_slot(%rip) /* tail jump: glibc sees our caller's return address */
1:
    jmp vt_dlsym_wrapped          /* (handle, name) in %rdi, %rsi */
    .cfi_endproc
    .size vt_dlsym_entry, .-vt_dlsym_entry
    .size vt_dlsym_entry_compat, .-vt_dlsym_entry_compat

    .section .note.GNU-stack,"",@progbits
