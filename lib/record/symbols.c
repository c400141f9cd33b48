/* Names for recorded frames, looked up when the trace and the snapshot are
 * written, never while recording: the hot path keeps raw return addresses
 * (backtrace()). Each address is looked up once per write (a cache).
 *
 * With libdw (TPROF_HAVE_LIBDW): the function from DWARF, else from the
 * symbol table (static functions included, which dladdr cannot name), its
 * file:line, and the calls inlined at that address as frames of their own,
 * as addr2line -i does: at -O3 most of a program's own functions are inlined
 * into their callers. Without libdw: dladdr, which names only exported
 * symbols (link with -rdynamic) and gives no line. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifdef TPROF_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

typedef struct {
    uintptr_t addr; /* 0: empty */
    uint32_t off, n; /* its frames: syms[off .. off + n) */
} sym_slot;

static struct {
    sym_slot *slots;
    size_t cap, used;
    rec_sym *syms;
    size_t nsyms, syms_cap;
#ifdef TPROF_HAVE_LIBDW
    Dwfl *dwfl;
    int dwfl_tried;
#endif
} S;

static const rec_sym unknown = { "??", "??", 0 };

static int push(const char *function, const char *file, int line)
{
    if (S.nsyms == S.syms_cap) {
        size_t c = S.syms_cap ? S.syms_cap * 2 : 256;
        rec_sym *p = realloc(S.syms, c * sizeof *p);
        if (!p) return -1;
        S.syms = p;
        S.syms_cap = c;
    }
    char *fn = strdup(function && *function ? function : "??"), *fl = strdup(file && *file ? file : "??");
    if (!fn || !fl) {
        free(fn);
        free(fl);
        return -1;
    }
    S.syms[S.nsyms++] = (rec_sym){ fn, fl, line > 0 ? line : 0 };
    return 0;
}

/* "module+0xOFFSET" for an address no symbol covers. */
static void module_offset(char *dst, size_t n, const char *module, uintptr_t addr, uintptr_t base)
{
    const char *slash = module ? strrchr(module, '/') : NULL;
    snprintf(dst, n, "%s+0x%" PRIxPTR, slash ? slash + 1 : module ? module : "??", addr - base);
}

static int resolve_dladdr(uintptr_t addr)
{
    Dl_info di;
    if (!dladdr((void *)addr, &di)) {
        char hex[32];
        snprintf(hex, sizeof hex, "0x%" PRIxPTR, addr);
        return push(hex, "??", 0);
    }
    if (di.dli_sname) return push(di.dli_sname, di.dli_fname, 0);
    char name[300];
    module_offset(name, sizeof name, di.dli_fname, addr, (uintptr_t)di.dli_fbase);
    return push(name, di.dli_fname, 0);
}

#ifdef TPROF_HAVE_LIBDW
/* Separate debug files are not looked for: the program's own DWARF is in its
 * file, and the standard callback would ask a debuginfod server (Debian sets
 * DEBUGINFOD_URLS) while the training program waits on the write. */
static int no_separate_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                                 const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                 char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file, (void)debuglink_crc;
    *debuginfo_file_name = NULL;
    return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_separate_debuginfo,
};

static Dwfl *dwfl_get(void)
{
    if (!S.dwfl_tried) {
        S.dwfl_tried = 1;
        Dwfl *d = dwfl_begin(&proc_callbacks);
        if (d && (dwfl_linux_proc_report(d, getpid()) != 0 || dwfl_report_end(d, NULL, NULL) != 0)) {
            dwfl_end(d);
            d = NULL;
        }
        S.dwfl = d;
    }
    return S.dwfl;
}

/* PC: the call instruction (return address - 1), so that the line is the call's. */
static int resolve_dwarf(Dwfl *d, uintptr_t pc)
{
    Dwfl_Module *mod = dwfl_addrmodule(d, pc);
    if (!mod) return 1;
    Dwarf_Addr start = 0;
    const char *mainfile = NULL;
    const char *modname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
    const char *modfile = mainfile ? mainfile : modname;

    const char *file = NULL;
    int line = 0;
    Dwfl_Line *ln = dwfl_module_getsrc(mod, pc);
    if (ln) file = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);

    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias), *scopes = NULL;
    int nscopes = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    int added = 0, rc = 0;
    /* innermost first: each inlined call, then the function it was inlined into */
    for (int i = 0; i < nscopes && !rc; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
        const char *name = dwarf_diename(&scopes[i]);
        if (!name && tag == DW_TAG_subprogram) name = dwfl_module_addrname(mod, pc);
        rc = push(name, file ? file : modfile, line);
        added++;
        if (tag == DW_TAG_subprogram) break;
        /* the caller's position: where this inlined call was written */
        Dwarf_Attribute attr;
        Dwarf_Word v;
        file = NULL;
        line = 0;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &v) == 0) line = (int)v;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &v) == 0) {
            if (!files && dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
            if (files && v < nfiles) file = dwarf_filesrc(files, v, NULL, NULL);
        }
    }
    free(scopes);
    if (added) return rc;
    /* no DWARF for this function (libc, crt1's _start): the symbol table, and
     * no line (the line table's nearest row would be another function's) */
    const char *sym = dwfl_module_addrname(mod, pc);
    if (sym) return push(sym, modfile, 0);
    char name[300];
    module_offset(name, sizeof name, modfile, pc + 1, (uintptr_t)start);
    return push(name, modfile, 0);
}
#endif

const rec_sym *tprof__symbolize(void *addr, int *n)
{
    uintptr_t a = (uintptr_t)addr;
    *n = 1;
    if (!a) return &unknown;
    if ((S.used + 1) * 2 > S.cap) {
        size_t c = S.cap ? S.cap * 2 : 1024;
        sym_slot *s = calloc(c, sizeof *s);
        if (!s) return &unknown;
        for (size_t i = 0; i < S.cap; i++)
            if (S.slots[i].addr) {
                size_t j = (S.slots[i].addr * 0x9E3779B97F4A7C15ULL >> 20) & (c - 1);
                while (s[j].addr) j = (j + 1) & (c - 1);
                s[j] = S.slots[i];
            }
        free(S.slots);
        S.slots = s;
        S.cap = c;
    }
    size_t j = (a * 0x9E3779B97F4A7C15ULL >> 20) & (S.cap - 1);
    while (S.slots[j].addr && S.slots[j].addr != a) j = (j + 1) & (S.cap - 1);
    if (!S.slots[j].addr) {
        size_t off = S.nsyms;
        int rc = 1;
#ifdef TPROF_HAVE_LIBDW
        Dwfl *d = dwfl_get();
        if (d) rc = resolve_dwarf(d, a - 1);
#endif
        if (rc > 0) rc = resolve_dladdr(a);
        if (rc < 0 || S.nsyms == off) { /* out of memory: this address stays unnamed */
            while (S.nsyms > off) {
                S.nsyms--;
                free((char *)S.syms[S.nsyms].function);
                free((char *)S.syms[S.nsyms].file);
            }
            return &unknown;
        }
        S.slots[j] = (sym_slot){ a, (uint32_t)off, (uint32_t)(S.nsyms - off) };
        S.used++;
    }
    *n = (int)S.slots[j].n;
    return S.syms + S.slots[j].off;
}

void tprof__symbols_release(void)
{
    for (size_t i = 0; i < S.nsyms; i++) {
        free((char *)S.syms[i].function);
        free((char *)S.syms[i].file);
    }
    free(S.syms);
    free(S.slots);
#ifdef TPROF_HAVE_LIBDW
    if (S.dwfl) dwfl_end(S.dwfl);
#endif
    memset(&S, 0, sizeof S);
}
