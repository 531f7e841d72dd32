// Where CPython's structs keep the fields vramtrace's struct reader follows (python_struct_reader.h),
// one table per minor version. Facts from each version's headers; no code of CPython's.
#pragma once

namespace vramtrace::python {

// Where the fields the struct reader needs lie, per minor version. Offsets in bytes, 64-bit
// builds with the default (GIL) configuration; from Include/cpython/pystate.h,
// Include/internal/pycore_frame.h, Include/cpython/code.h and Include/cpython/unicodeobject.h of
// each version (3.11's checked with offsetof against Debian's headers).
struct Layout {
    int minor = 0;
    // PyThreadState
    int ts_interp = 16;
    int ts_frame = 0;          // 3.10: frame (PyFrameObject *); 3.11/3.12: cframe; 3.13: current_frame
    int cframe_current = -1;   // _PyCFrame.current_frame (3.11/3.12), -1 when there is no cframe
    // 3.10: PyFrameObject
    int fo_back = 24, fo_code = 32, fo_trace = 72, fo_lasti = 96, fo_lineno = 100;
    // 3.11+: _PyInterpreterFrame
    int fr_code = 0, fr_previous = 0, fr_instr = 0, fr_owner = 0;
    int fr_is_entry = -1;      // 3.11: the first frame of a run of the evaluation loop
    int owner_generator = 1;
    int owner_cstack = -1;     // 3.12+: the shim frames of the C stack
    int owner_max = 2;
    // PyCodeObject
    int co_size = 16;          // ob_size: code units (3.11+)
    int co_firstlineno = 0, co_filename = 0, co_name = 0, co_firsttraceable = -1, co_code = -1;
    // str: PyASCIIObject / PyCompactUnicodeObject
    int str_length = 16, str_state = 32, str_ascii_size = 0, str_compact_size = 0;
};

// Fills l for CPython 3.<minor>; false when there is no table for it (3.14 and later, before 3.10).
inline bool layout_for(int minor, Layout &l) {
    l.minor = minor;
    switch (minor) {
    case 10:
        l.ts_frame = 24;
        l.co_firstlineno = 40, l.co_filename = 104, l.co_name = 112;
        l.str_ascii_size = 48, l.str_compact_size = 72;
        return true;
    case 11:
        l.ts_frame = 56, l.cframe_current = 8;
        l.fr_code = 32, l.fr_previous = 48, l.fr_instr = 56, l.fr_owner = 69, l.fr_is_entry = 68;
        l.co_firstlineno = 72, l.co_filename = 112, l.co_name = 128, l.co_firsttraceable = 168, l.co_code = 184;
        l.str_ascii_size = 48, l.str_compact_size = 72;
        return true;
    case 12:
        l.ts_frame = 56, l.cframe_current = 0;
        l.fr_code = 0, l.fr_previous = 8, l.fr_instr = 56, l.fr_owner = 70;
        l.owner_cstack = 3, l.owner_max = 3;
        l.co_firstlineno = 68, l.co_filename = 112, l.co_name = 128, l.co_firsttraceable = 176, l.co_code = 192;
        l.str_ascii_size = 40, l.str_compact_size = 56;
        return true;
    case 13:
        l.ts_frame = 72;
        l.fr_code = 0, l.fr_previous = 8, l.fr_instr = 56, l.fr_owner = 70;
        l.owner_cstack = 3, l.owner_max = 3;
        l.co_firstlineno = 68, l.co_filename = 112, l.co_name = 128, l.co_firsttraceable = 184, l.co_code = 200;
        l.str_ascii_size = 40, l.str_compact_size = 56;
        return true;
    default:
        return false;
    }
}

} // namespace vramtrace::python
