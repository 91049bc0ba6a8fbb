#!/usr/bin/env python3
"""Regenerates ufo-batch's OSWorld-format test tasks and their inputs (standard library only).

    python3 tests/osworld/make_fixtures.py          write everything but the golds
    python3 tests/osworld/make_fixtures.py --check  exit 1 if a file differs or a gold is missing

What it writes, in OSWorld's own layout:
  evaluation_examples/examples/<domain>/<id>.json   the tasks (OSWorld's exact format)
  evaluation_examples/test_small.json               the suite: {domain: [ids]}
  bad/evaluation_examples/examples/<domain>/<id>.json, bad/evaluation_examples/test_all.json
                                                    tasks that must be refused or fail clearly
  cache/<id>/<uuid5(NAMESPACE_URL, url)>_<basename(path)>
                                                    what each `download` step fetches (so nothing
                                                    is fetched: the URLs are under example.invalid)
  cache/<id>/<dest>                                 what each `cloud_file` getter fetches (golds)

The inputs (a .xlsx, .docx and .pptx) are written here as minimal Office Open XML packages with
fixed zip timestamps, so the output is byte-for-byte reproducible and a few KB each.

The golds of the three LibreOffice tasks are NOT made here: each is the file LibreOffice itself
saved after the task's keyboard solve (see SOLVES below), made with

    target/osworld/venv/bin/python tests/osworld/verify.py --make-golds

which brings up a private desktop per task (as the runner does), runs OSWorld's setup through
src/osworld/driver.py, types the solve with xdotool, lets the task's own postconfig (Ctrl+S) save,
and copies the saved document into cache/<id>/<gold dest>. `verify.py` (no option) then checks
that each solve scores exactly 1.0 and each untouched document 0.0 with OSWorld's own metric.
The gold of the bad compare_images task is a small PNG written here.
"""

import json
import os
import struct
import sys
import uuid
import zipfile
import zlib
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_URL = "https://example.invalid/ufo-batch/osworld"
ZIP_TIME = (2024, 1, 1, 0, 0, 0)


def task_id(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{BASE_URL}/{name}"))


def url(tid, filename):
    return f"{BASE_URL}/{tid}/{filename}"


def download_cache_name(file_url, path):
    """OSWorld's SetupController._download_setup cache file name."""
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, file_url)}_{os.path.basename(path)}"


# -- Minimal Office Open XML packages -----------------------------------------------------------
def _zip(parts):
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts:
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, text.encode("utf-8"))
    return buf.getvalue()


XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
NS_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
NS_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
R_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
R_OFFICE = R_DOC + "/officeDocument"


def _rels(rels):
    body = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{target}"/>' for i, t, target in rels)
    return f'{XML}<Relationships xmlns="{NS_REL}">{body}</Relationships>'


def _content_types(overrides):
    body = ('<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>')
    body += "".join(f'<Override PartName="{p}" ContentType="{c}"/>' for p, c in overrides)
    return f'{XML}<Types xmlns="{NS_CT}">{body}</Types>'


def make_xlsx(rows):
    """rows: list of lists of str/int/None; strings are inline strings."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    cells = []
    for r, row in enumerate(rows, start=1):
        cs = []
        for c, value in enumerate(row):
            ref = f"{chr(ord('A') + c)}{r}"
            if value is None:
                continue
            if isinstance(value, str):
                cs.append(f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>')
            else:
                cs.append(f'<c r="{ref}"><v>{value}</v></c>')
        cells.append(f'<row r="{r}">{"".join(cs)}</row>')
    sheet = f'{XML}<worksheet xmlns="{ns}"><sheetData>{"".join(cells)}</sheetData></worksheet>'
    workbook = (f'{XML}<workbook xmlns="{ns}" xmlns:r="{R_DOC}"><sheets>'
                f'<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
    return _zip([
        ("[Content_Types].xml", _content_types([
            ("/xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"),
            ("/xl/worksheets/sheet1.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"),
        ])),
        ("_rels/.rels", _rels([("rId1", R_OFFICE, "xl/workbook.xml")])),
        ("xl/workbook.xml", workbook),
        ("xl/_rels/workbook.xml.rels", _rels([("rId1", R_DOC + "/worksheet", "worksheets/sheet1.xml")])),
        ("xl/worksheets/sheet1.xml", sheet),
    ])


def make_docx(paragraphs):
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>' for p in paragraphs)
    sect = ('<w:sectPr><w:pgSz w:w="11906" w:h="16838"/>'
            '<w:pgMar w:top="1134" w:right="1134" w:bottom="1134" w:left="1134" w:header="0" w:footer="0" w:gutter="0"/>'
            '</w:sectPr>')
    document = f'{XML}<w:document xmlns:w="{ns}"><w:body>{body}{sect}</w:body></w:document>'
    return _zip([
        ("[Content_Types].xml", _content_types([
            ("/word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"),
        ])),
        ("_rels/.rels", _rels([("rId1", R_OFFICE, "word/document.xml")])),
        ("word/document.xml", document),
    ])


_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_NS = f'xmlns:a="{_A}" xmlns:r="{R_DOC}" xmlns:p="{_P}"'
_GRP = ('<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
        '<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/>'
        '<a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>')


def _sp(shape_id, name, ph, box, text, size=None, textbox=False):
    x, y, cx, cy = box
    nv_sp = '<p:cNvSpPr txBox="1"/>' if textbox else '<p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>'
    nv_pr = f'<p:nvPr><p:ph type="{ph}"/></p:nvPr>' if ph else "<p:nvPr/>"
    rpr = f'<a:rPr lang="en-US" sz="{size}" dirty="0"/>' if size else '<a:rPr lang="en-US" dirty="0"/>'
    runs = f"<a:r>{rpr}<a:t>{escape(text)}</a:t></a:r>" if text else ""
    geom = '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>'
    return (f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/>{nv_sp}{nv_pr}</p:nvSpPr>'
            f'<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>{geom}</p:spPr>'
            f'<p:txBody><a:bodyPr wrap="square"><a:normAutofit/></a:bodyPr><a:lstStyle/>'
            f'<a:p>{runs}<a:endParaRPr lang="en-US" dirty="0"/></a:p></p:txBody></p:sp>')


def _theme():
    colors = [("dk1", '<a:sysClr val="windowText" lastClr="000000"/>'),
              ("lt1", '<a:sysClr val="window" lastClr="FFFFFF"/>'),
              ("dk2", '<a:srgbClr val="1F497D"/>'), ("lt2", '<a:srgbClr val="EEECE1"/>'),
              ("accent1", '<a:srgbClr val="4F81BD"/>'), ("accent2", '<a:srgbClr val="C0504D"/>'),
              ("accent3", '<a:srgbClr val="9BBB59"/>'), ("accent4", '<a:srgbClr val="8064A2"/>'),
              ("accent5", '<a:srgbClr val="4BACC6"/>'), ("accent6", '<a:srgbClr val="F79646"/>'),
              ("hlink", '<a:srgbClr val="0000FF"/>'), ("folHlink", '<a:srgbClr val="800080"/>')]
    clr = "".join(f"<a:{k}>{v}</a:{k}>" for k, v in colors)
    fonts = ('<a:majorFont><a:latin typeface="Liberation Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>'
             '<a:minorFont><a:latin typeface="Liberation Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont>')
    fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
    line = f'<a:ln w="9525">{fill}</a:ln>'
    fmt = (f'<a:fillStyleLst>{fill * 3}</a:fillStyleLst><a:lnStyleLst>{line * 3}</a:lnStyleLst>'
           f'<a:effectStyleLst>{"<a:effectStyle><a:effectLst/></a:effectStyle>" * 3}</a:effectStyleLst>'
           f'<a:bgFillStyleLst>{fill * 3}</a:bgFillStyleLst>')
    return (f'{XML}<a:theme xmlns:a="{_A}" name="Plain"><a:themeElements>'
            f'<a:clrScheme name="Plain">{clr}</a:clrScheme><a:fontScheme name="Plain">{fonts}</a:fontScheme>'
            f'<a:fmtScheme name="Plain">{fmt}</a:fmtScheme></a:themeElements></a:theme>')


def make_pptx(title, body):
    title_box = (457200, 274638, 8229600, 1143000)
    body_box = (457200, 1600200, 8229600, 4525963)
    clr_map = ('<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" '
               'accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" '
               'folHlink="folHlink"/>')
    master = (f'{XML}<p:sldMaster {_NS}><p:cSld><p:spTree>{_GRP}'
              f'{_sp(2, "Title Placeholder 1", "title", title_box, "", 4400)}'
              f'{_sp(3, "Text Placeholder 2", "body", body_box, "", 2800)}'
              f'</p:spTree></p:cSld>{clr_map}'
              f'<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst>'
              f'</p:sldMaster>')
    layout = (f'{XML}<p:sldLayout {_NS} type="titleOnly" preserve="1"><p:cSld name="Title Only"><p:spTree>{_GRP}'
              f'{_sp(2, "Title 1", "title", title_box, "")}'
              f'</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>')
    slide = (f'{XML}<p:sld {_NS}><p:cSld><p:spTree>{_GRP}'
             f'{_sp(2, "Title 1", "title", title_box, title)}'
             f'{_sp(3, "TextBox 2", None, body_box, body, 2800, textbox=True)}'
             f'</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>')
    presentation = (f'{XML}<p:presentation {_NS}>'
                    f'<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
                    f'<p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst>'
                    f'<p:sldSz cx="9144000" cy="6858000" type="screen4x3"/><p:notesSz cx="6858000" cy="9144000"/>'
                    f'</p:presentation>')
    pml = "application/vnd.openxmlformats-officedocument.presentationml"
    return _zip([
        ("[Content_Types].xml", _content_types([
            ("/ppt/presentation.xml", f"{pml}.presentation.main+xml"),
            ("/ppt/slideMasters/slideMaster1.xml", f"{pml}.slideMaster+xml"),
            ("/ppt/slideLayouts/slideLayout1.xml", f"{pml}.slideLayout+xml"),
            ("/ppt/slides/slide1.xml", f"{pml}.slide+xml"),
            ("/ppt/theme/theme1.xml", "application/vnd.openxmlformats-officedocument.theme+xml"),
        ])),
        ("_rels/.rels", _rels([("rId1", R_OFFICE, "ppt/presentation.xml")])),
        ("ppt/presentation.xml", presentation),
        ("ppt/_rels/presentation.xml.rels", _rels([
            ("rId1", R_DOC + "/slideMaster", "slideMasters/slideMaster1.xml"),
            ("rId2", R_DOC + "/slide", "slides/slide1.xml"),
            ("rId3", R_DOC + "/theme", "theme/theme1.xml"),
        ])),
        ("ppt/slideMasters/slideMaster1.xml", master),
        ("ppt/slideMasters/_rels/slideMaster1.xml.rels", _rels([
            ("rId1", R_DOC + "/slideLayout", "../slideLayouts/slideLayout1.xml"),
            ("rId2", R_DOC + "/theme", "../theme/theme1.xml"),
        ])),
        ("ppt/slideLayouts/slideLayout1.xml", layout),
        ("ppt/slideLayouts/_rels/slideLayout1.xml.rels", _rels([
            ("rId1", R_DOC + "/slideMaster", "../slideMasters/slideMaster1.xml"),
        ])),
        ("ppt/slides/slide1.xml", slide),
        ("ppt/slides/_rels/slide1.xml.rels", _rels([
            ("rId1", R_DOC + "/slideLayout", "../slideLayouts/slideLayout1.xml"),
        ])),
        ("ppt/theme/theme1.xml", _theme()),
    ])


def make_png(width, height, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


# -- The tasks ---------------------------------------------------------------------------------
def save_postconfig(window, pause_after=0.5, inner_sleep=False):
    """OSWorld's LibreOffice postconfig: activate the window (strict), wait, Ctrl+S, wait."""
    command = "import pyautogui; import time; pyautogui.hotkey('ctrl', 's'); time.sleep(0.5); " if inner_sleep \
        else 'import pyautogui; pyautogui.hotkey("ctrl", "s");'
    steps = [
        {"type": "activate_window", "parameters": {"window_name": window, "strict": True}},
        {"type": "sleep", "parameters": {"seconds": 0.5}},
        {"type": "execute", "parameters": {"command": ["python", "-c", command]}},
    ]
    if pause_after:
        steps.append({"type": "sleep", "parameters": {"seconds": pause_after}})
    return steps


def download_and_open(tid, filename, path):
    return [
        {"type": "download", "parameters": {"files": [{"url": url(tid, filename), "path": path}]}},
        {"type": "open", "parameters": {"path": path}},
    ]


def task(tid, snapshot, instruction, config, evaluator, apps):
    return {
        "id": tid,
        "snapshot": snapshot,
        "instruction": instruction,
        "source": "ufo-batch test fixture (tests/osworld/make_fixtures.py)",
        "config": config,
        "trajectory": "trajectories/",
        "related_apps": apps,
        "evaluator": evaluator,
        "proxy": False,
        "fixed_ip": False,
        "possibility_of_env_change": "low",
    }


CALC = task_id("calc-sum")
WRITER = task_id("writer-append")
IMPRESS = task_id("impress-title")
OS = task_id("os-reports")
INFEASIBLE = task_id("os-infeasible")
BAD_STEP = task_id("bad-unknown-step")
BAD_METRIC = task_id("bad-unknown-metric")
BAD_MISSING_PACKAGE = task_id("bad-needs-skimage")
BAD_DOTDOT = task_id("bad-path-dotdot")
BAD_ABSOLUTE = task_id("bad-path-absolute")
BAD_NO_RESULT = task_id("bad-result-missing")
BAD_OPEN = task_id("bad-open-missing-file")

CALC_ROWS = [["Quarter", "Sales"], ["Q1", 120], ["Q2", 95], ["Q3", 143], ["Q4", 110], ["Total", None]]
WRITER_PARAGRAPHS = ["Meeting notes", "Attendees: Ana, Ben and Chloe."]
IMPRESS_TITLE, IMPRESS_BODY = "Quarterly review", "Revenue grew in every region."

# What each fixture's keyboard (or shell) solve is: the steps verify.py runs, in order.
#   {"key": [keysyms...]}  one `xdotool key --delay 60 KEY...`
#   {"type": "text"}       `xdotool type --delay 60 text` (ASCII only)
#   {"sleep": s}           wait
#   {"shell": "cmd"}       run through OSWorld's server /execute (as an agent's action would)
#   {"last_action": "..."} the agent's last action for evaluate (default DONE)
SOLVES = {
    CALC: [{"sleep": 2.0}, {"key": ["ctrl+Home"]}, {"sleep": 0.5}, {"key": ["Down"] * 5 + ["Right"]},
           {"sleep": 0.5}, {"type": "=SUM(B2:B5)"}, {"sleep": 0.3}, {"key": ["Return"]}, {"sleep": 0.5}],
    WRITER: [{"sleep": 2.0}, {"key": ["ctrl+End"]}, {"sleep": 0.5}, {"key": ["Return"]}, {"sleep": 0.5},
             {"type": "Next meeting on Friday."}, {"sleep": 0.5}],
    IMPRESS: [{"sleep": 2.0}, {"key": ["Tab"]}, {"sleep": 0.3}, {"key": ["Return"]}, {"sleep": 0.3},
              {"key": ["ctrl+a"]}, {"type": "Quarterly results"}, {"sleep": 0.3},
              {"key": ["Escape"]}, {"sleep": 0.3}, {"key": ["Escape"]}, {"sleep": 0.5}],
    OS: [{"shell": "mkdir -p /home/user/reports && echo done > /home/user/reports/summary.txt"}],
    INFEASIBLE: [{"last_action": "FAIL"}],
}
# Which file of the task home is the gold of a LibreOffice task: (path on the desktop, gold dest).
GOLDS = {
    CALC: ("/home/user/Quarterly_Totals.xlsx", "Quarterly_Totals_gold.xlsx"),
    WRITER: ("/home/user/Documents/Meeting_Notes.docx", "Meeting_Notes_Gold.docx"),
    IMPRESS: ("/home/user/Desktop/Review.pptx", "Review_Gold.pptx"),
}


def good_tasks():
    calc_path = "/home/user/Quarterly_Totals.xlsx"
    calc = task(
        CALC, "libreoffice_calc",
        "In cell B6 of the open sheet, enter a formula that adds up the sales in B2:B5.",
        download_and_open(CALC, "Quarterly_Totals.xlsx", calc_path),
        {
            "postconfig": save_postconfig("Quarterly_Totals.xlsx - LibreOffice Calc", pause_after=3),
            "func": "compare_table",
            "expected": {"type": "cloud_file", "path": url(CALC, "Quarterly_Totals_gold.xlsx"),
                         "dest": "Quarterly_Totals_gold.xlsx"},
            "result": {"type": "vm_file", "path": calc_path, "dest": "Quarterly_Totals.xlsx"},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
        },
        ["libreoffice calc"])
    writer_path = "/home/user/Documents/Meeting_Notes.docx"
    writer = task(
        WRITER, "libreoffice_writer",
        "Add a new last paragraph to the document that says exactly: Next meeting on Friday.",
        download_and_open(WRITER, "Meeting_Notes.docx", writer_path),
        {
            "postconfig": save_postconfig("Meeting_Notes.docx - LibreOffice Writer", pause_after=3, inner_sleep=True),
            "func": "compare_docx_files",
            "expected": {"type": "cloud_file", "path": url(WRITER, "Meeting_Notes_Gold.docx"),
                         "dest": "Meeting_Notes_Gold.docx"},
            "result": {"type": "vm_file", "path": writer_path, "dest": "Meeting_Notes.docx"},
        },
        ["libreoffice_writer"])
    impress_path = "/home/user/Desktop/Review.pptx"
    impress = task(
        IMPRESS, "libreoffice_impress",
        "Change the title of slide 1 to: Quarterly results",
        [{"type": "download", "parameters": {"files": [{"url": url(IMPRESS, "Review.pptx"), "path": impress_path}]}},
         {"type": "sleep", "parameters": {"seconds": 0.5}},
         {"type": "open", "parameters": {"path": impress_path}}],
        {
            "postconfig": save_postconfig("Review.pptx - LibreOffice Impress", pause_after=5, inner_sleep=True),
            "func": "compare_pptx_files",
            "expected": {"type": "cloud_file", "path": url(IMPRESS, "Review_Gold.pptx"), "dest": "Review_Gold.pptx"},
            "result": {"type": "vm_file", "path": impress_path, "dest": "Review.pptx"},
        },
        ["libreoffice_impress"])
    os_task = task(
        OS, "os",
        "Create a folder named reports in my home folder, with a file summary.txt in it whose only line is: done",
        [{"type": "execute", "parameters": {"command": "mkdir -p /home/user/Desktop", "shell": True}}],
        {
            "func": ["exact_match", "check_include_exclude"],
            "result": [
                {"type": "vm_command_line", "command": "cat /home/user/reports/summary.txt 2>/dev/null || echo missing",
                 "shell": True},
                {"type": "vm_command_line", "command": ["ls", "-1", "/home/user"]},
            ],
            "expected": [
                {"type": "rule", "rules": {"expected": "done\n"}},
                {"type": "rule", "rules": {"include": ["reports"], "exclude": ["Reports"]}},
            ],
        },
        ["os"])
    infeasible = task(
        INFEASIBLE, "os",
        "Set this computer's display refresh rate to 1000 Hz.",
        [{"type": "execute", "parameters": {"command": ["true"]}}],
        {"func": "infeasible"},
        ["os"])
    return {"libreoffice_calc": [calc], "libreoffice_writer": [writer], "libreoffice_impress": [impress],
            "os": [os_task, infeasible]}


def bad_tasks():
    calc_path = "/home/user/Quarterly_Totals.xlsx"
    calc_eval = {
        "func": "compare_table",
        "expected": {"type": "cloud_file", "path": url(BAD_NO_RESULT, "Quarterly_Totals_gold.xlsx"),
                     "dest": "Quarterly_Totals_gold.xlsx"},
        "result": {"type": "vm_file", "path": "/home/user/Quarterly_Totals_saved.xlsx",
                   "dest": "Quarterly_Totals_saved.xlsx"},
        "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
    }
    unknown_step = task(
        BAD_STEP, "os", "Bad fixture: a setup step type desktop-env does not have.",
        [{"type": "tidy_up_desktop", "parameters": {}}],
        {"func": "exact_match",
         "result": {"type": "vm_command_line", "command": "echo hi", "shell": True},
         "expected": {"type": "rule", "rules": {"expected": "hi\n"}}},
        ["os"])
    unknown_metric = task(
        BAD_METRIC, "os", "Bad fixture: a metric desktop-env does not have.",
        [],
        {"func": "compare_spreadsheets_magically",
         "result": {"type": "vm_command_line", "command": "echo hi", "shell": True},
         "expected": {"type": "rule", "rules": {"expected": "hi\n"}}},
        ["os"])
    png_path = "/home/user/Pictures/square.png"
    needs_skimage = task(
        BAD_MISSING_PACKAGE, "gimp", "Bad fixture: compare_images, which needs scikit-image (skimage).",
        [{"type": "download", "parameters": {"files": [{"url": url(BAD_MISSING_PACKAGE, "square.png"),
                                                        "path": png_path}]}}],
        {"func": "compare_images",
         "result": {"type": "vm_file", "path": png_path, "dest": "square.png"},
         "expected": {"type": "cloud_file", "path": url(BAD_MISSING_PACKAGE, "square_gold.png"),
                      "dest": "square_gold.png"}},
        # Not "gimp", which this machine lacks: the metric's package is what is missing.
        ["image viewer"])
    dotdot = task(
        BAD_DOTDOT, "os", "Bad fixture: a download path that climbs out of /home/user with '..'.",
        [{"type": "download", "parameters": {"files": [{"url": url(BAD_DOTDOT, "notes.txt"),
                                                        "path": "/home/user/../../etc/ufo-batch-osworld-test.txt"}]}}],
        {"func": "infeasible"},
        ["os"])
    absolute = task(
        BAD_ABSOLUTE, "os", "Bad fixture: a download path outside /home/user and /tmp.",
        [{"type": "download", "parameters": {"files": [{"url": url(BAD_ABSOLUTE, "notes.txt"),
                                                        "path": "/etc/ufo-batch-osworld-test.txt"}]}}],
        {"func": "infeasible"},
        ["os"])
    no_result = task(
        BAD_NO_RESULT, "libreoffice_calc",
        "Bad fixture: the evaluator reads a file that nothing ever writes.",
        [{"type": "download", "parameters": {"files": [{"url": url(BAD_NO_RESULT, "Quarterly_Totals.xlsx"),
                                                        "path": calc_path}]}}],
        calc_eval,
        ["libreoffice calc"])
    open_missing = task(
        BAD_OPEN, "libreoffice_calc",
        "Bad fixture: a setup step that fails (it opens a file that was never downloaded).",
        [{"type": "open", "parameters": {"path": "/home/user/Never_Downloaded.xlsx"}}],
        calc_eval,
        ["libreoffice calc"])
    return {"os": [unknown_step, unknown_metric, dotdot, absolute], "gimp": [needs_skimage],
            "libreoffice_calc": [no_result, open_missing]}


# What the runner must answer for each bad task (verify.py checks it).
BAD_EXPECTED = {
    BAD_STEP: {"setup": "task"},
    BAD_METRIC: {"setup": "task"},
    BAD_DOTDOT: {"setup": "task"},
    BAD_ABSOLUTE: {"setup": "task"},
    BAD_MISSING_PACKAGE: {"evaluate": "missing"},
    BAD_NO_RESULT: {"score": 0.0},
    BAD_OPEN: {"setup": "setup"},
}


def cache_files():
    """{relative path under cache/: bytes} for every input (not the LibreOffice golds)."""
    files = {}

    def add_download(tid, filename, path, data):
        files[f"{tid}/{download_cache_name(url(tid, filename), path)}"] = data

    xlsx = make_xlsx(CALC_ROWS)
    add_download(CALC, "Quarterly_Totals.xlsx", "/home/user/Quarterly_Totals.xlsx", xlsx)
    add_download(WRITER, "Meeting_Notes.docx", "/home/user/Documents/Meeting_Notes.docx",
                 make_docx(WRITER_PARAGRAPHS))
    add_download(IMPRESS, "Review.pptx", "/home/user/Desktop/Review.pptx", make_pptx(IMPRESS_TITLE, IMPRESS_BODY))
    add_download(BAD_MISSING_PACKAGE, "square.png", "/home/user/Pictures/square.png", make_png(16, 16, (200, 30, 30)))
    files[f"{BAD_MISSING_PACKAGE}/square_gold.png"] = make_png(16, 16, (200, 30, 30))
    add_download(BAD_NO_RESULT, "Quarterly_Totals.xlsx", "/home/user/Quarterly_Totals.xlsx", xlsx)
    files[f"{BAD_NO_RESULT}/Quarterly_Totals_gold.xlsx"] = xlsx
    return files


def outputs():
    """{path relative to tests/osworld: bytes} for everything this script owns."""
    out = {}

    def dump(obj):
        return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    for root, tasks in (("evaluation_examples", good_tasks()), ("bad/evaluation_examples", bad_tasks())):
        suite = {}
        for domain, items in tasks.items():
            for t in items:
                out[f"{root}/examples/{domain}/{t['id']}.json"] = dump(t)
                suite.setdefault(domain, []).append(t["id"])
        out[f"{root}/{'test_small.json' if root == 'evaluation_examples' else 'test_all.json'}"] = dump(suite)
    for rel, data in cache_files().items():
        out[f"cache/{rel}"] = data
    return out


def main(argv):
    check = "--check" in argv[1:]
    bad = 0
    for rel, data in sorted(outputs().items()):
        path = os.path.join(HERE, rel)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old == data:
            continue
        if check:
            print(f"differs: {rel}")
            bad += 1
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        print(f"wrote {rel} ({len(data)} bytes)")
    for tid, (_, dest) in GOLDS.items():
        gold = os.path.join(HERE, "cache", tid, dest)
        if not os.path.exists(gold):
            print(f"gold missing: cache/{tid}/{dest} (make it with verify.py --make-golds)")
            bad += 1 if check else 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
