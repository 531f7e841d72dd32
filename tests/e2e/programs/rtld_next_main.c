/* Prints what RTLD_NEXT look-ups made from inside libvt_next_first.so return. Expected output,
 * with or without libvramtrace.so preloaded:
 *   next probe: second
 *   next malloc is libc's: yes */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

const char *vt_next_of_probe(void);
void *vt_next_malloc(void);

int main(void) {
    printf("next probe: %s\n", vt_next_of_probe());
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *libc_malloc = libc ? dlsym(libc, "malloc") : NULL;
    printf("next malloc is libc's: %s\n", vt_next_malloc() == libc_malloc && libc_malloc ? "yes" : "no");
    return 0;
}
