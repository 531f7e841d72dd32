"""%load_ext vramtrace, then %%vramtrace on a cell: the cell's device peak and its call sites.

The report is one display: text for a terminal, and where the frontend renders HTML (Jupyter) also
the interactive page of `vramtrace export --format html` for the snapshot taken after the cell.
Needs the kernel to run under libvramtrace.so (`vramtrace run -- jupyter lab`, or LD_PRELOAD and
NVTX_INJECTION64_PATH in the kernel's environment); without it the magic runs the cell and warns.
"""
import html
import os
import subprocess
import tempfile

import vramtrace

from . import _interval, _measure, _native


def _is_cell(file_name):
    # Terminal IPython names cells <ipython-input-N-HASH>; ipykernel writes them to
    # $TMPDIR/ipykernel_PID/HASH.py.
    return file_name.startswith("<ipython-input-") or "/ipykernel_" in file_name


def _report_text(result):
    lines = ["vramtrace: this cell's peak per device"]
    if not result.peaks:
        lines.append("  no device memory was tracked")
    for device, peak in sorted(result.peaks.items()):
        lines.append("device %d: peak %s (%d bytes), left live %s" % (
            device, _interval.human(peak), peak,
            _interval.human(sum(b for b, _, _ in result.left.get(device, [])))))
        lines += _measure.describe_peak(result, device)
    return "\n".join(lines)


def _report_html(snapshot_doc_path):
    cli = _native.cli_path()
    out = subprocess.run([cli, "export", "--format", "html", snapshot_doc_path], capture_output=True)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def register(ipython):
    from IPython.core.magic import register_cell_magic

    @register_cell_magic("vramtrace")
    def vramtrace_magic(line, cell):
        if not vramtrace.loaded():
            _native.warn_once("ipython", "libvramtrace.so is not loaded in this kernel: %%vramtrace "
                              "runs the cell and measures nothing")
            ipython.run_cell(cell)
            return
        with _measure.Interval("cell", prefer_file=_is_cell) as interval:
            ipython.run_cell(cell)
        text = _report_text(interval.result)
        bundle = {"text/plain": text}
        fd, path = tempfile.mkstemp(prefix="vramtrace-cell-", suffix=".json")
        os.close(fd)
        try:
            vramtrace.dump(path)
            page = _report_html(path)
        finally:
            os.unlink(path)
        if page is not None:
            doc = html.escape(page, quote=True)
            bundle["text/html"] = ("<pre>%s</pre><iframe srcdoc=\"%s\" style=\"width:100%%;height:600px;"
                                   "border:0\"></iframe>" % (html.escape(text), doc))
        from IPython.display import display
        display(bundle, raw=True)
