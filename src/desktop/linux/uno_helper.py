"""ufo-batch's Office API helper: UFO's Office COM tools (ufo/client/mcp/local_servers/
word_wincom_mcp_server.py, excel_wincom_mcp_server.py, ppt_wincom_mcp_server.py, and
ufo/automator/app_apis/*) carried out on the live LibreOffice document of a task's desktop,
through LibreOffice's own automation API (UNO, Debian's python3-uno).

It runs inside the task's desktop jail, started by the runner with /usr/bin/python3 (the
interpreter python3-uno is built for), and speaks JSON lines on its standard input and
output: a request {"id", "app": "word"|"excel"|"powerpoint", "tool", "args"} gets one
answer {"id", "ok": RESULT} or {"id", "error": WHY}. It connects to the office over the
named pipe given as its first argument (soffice --accept=pipe,name=NAME;urp;...), waiting
while the office starts; the document is the one whose path is its second argument, or
else the one of the app asked for. Names, parameters, 1-based indexes and result texts
are UFO's; where UFO's own code is wrong (a PowerPoint colour with a leading '#', columns
whose header is not in row 1) it is said in the README's tool table.

usage: /usr/bin/python3 uno_helper.py PIPE_NAME [DOCUMENT_PATH]
"""

import json
import os
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

PIPE = sys.argv[1]
DOCUMENT = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else ""
WORKSPACE = os.getcwd()
CONNECT_WAIT = 60.0
SERVICES = {
    "word": "com.sun.star.text.TextDocument",
    "excel": "com.sun.star.sheet.SpreadsheetDocument",
    "powerpoint": "com.sun.star.presentation.PresentationDocument",
}
NAMES = {"word": "Writer (Word)", "excel": "Calc (Excel)", "powerpoint": "Impress (PowerPoint)"}
# The most cells one call reads or rewrites, as src/desktop/office.rs's MAX_CELLS (the
# runner checks the ranges it is given before the call; this checks the ones the office
# finds, a -1 end or a used block).
MAX_CELLS = 100_000
# How much of a text an answer quotes.
QUOTED = 200


class ToolError(Exception):
    """A call that cannot be carried out, with why."""


def props(**values):
    out = []
    for name, value in values.items():
        p = PropertyValue()
        p.Name = name
        p.Value = value
        out.append(p)
    return tuple(out)


_office = None


def office():
    """The office's component context, connected once (waiting while it starts)."""
    global _office
    if _office is not None:
        return _office
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.time() + CONNECT_WAIT
    while True:
        try:
            _office = resolver.resolve(f"uno:pipe,name={PIPE};urp;StarOffice.ComponentContext")
            return _office
        except NoConnectException:
            if time.time() > deadline:
                raise ToolError(f"LibreOffice did not answer on its automation pipe within {CONNECT_WAIT:.0f}s")
            time.sleep(0.2)


def service(name):
    """A service of the office (not of this process: the drawing filters live there)."""
    ctx = office()
    return ctx.ServiceManager.createInstanceWithContext(name, ctx)


def desktop():
    return service("com.sun.star.frame.Desktop")


def document(app):
    """The task's document (by its path), else the one open document of the app asked for."""
    service = SERVICES[app]
    wanted = uno.systemPathToFileUrl(DOCUMENT) if DOCUMENT else None
    candidates = []
    components = desktop().Components.createEnumeration()
    while components.hasMoreElements():
        c = components.nextElement()
        if not hasattr(c, "supportsService") or not c.supportsService(service):
            continue
        if wanted and getattr(c, "URL", "") == wanted:
            return c
        candidates.append(c)
    if candidates:
        return candidates[0]
    current = desktop().CurrentComponent
    if current is not None and current.supportsService(service):
        return current
    raise ToolError(f"no {NAMES[app]} document is open")


def document_dir(doc):
    url = getattr(doc, "URL", "")
    return os.path.dirname(uno.fileUrlToSystemPath(url)) if url else WORKSPACE


def document_stem(doc):
    url = getattr(doc, "URL", "")
    if not url:
        return "document"
    return os.path.splitext(os.path.basename(uno.fileUrlToSystemPath(url)))[0]


def quoted(text):
    """`text` as an answer quotes it: whole when short (UFO's exact words), else cut."""
    text = str(text)
    return text if len(text) <= QUOTED else text[: QUOTED - 1] + "…"


def within_cells(rows, columns, what):
    """Refuses a block of more cells than a call may take, before the office is asked."""
    cells = max(rows, 0) * max(columns, 0)
    if cells > MAX_CELLS:
        raise ToolError(f"{what} holds {cells} cells ({rows} rows × {columns} columns); a call may take at most {MAX_CELLS}")


def shown(path):
    """A saved file's path as results show it: relative to the workspace when it is in it
    (so that a recorded result replays wherever the run folder is)."""
    rel = os.path.relpath(path, WORKSPACE)
    return path if rel.startswith("..") else rel


def inside_workspace(path):
    workspace = os.path.realpath(WORKSPACE)
    return os.path.commonpath([os.path.realpath(path), workspace]) == workspace


def save_path(doc, file_dir, file_name, file_ext, default_ext):
    """UFO's defaults (the document's folder and name; its default extension), refused as
    its `validate_save_path` refuses (`..`), and kept in the task's workspace: the folder,
    and the whole joined path (a name or an extension with a separator, `..` or an
    absolute part is refused, and so is a path that resolves outside)."""
    if ".." in file_dir.replace("\\", "/").split("/"):
        raise ToolError(f"Path '{quoted(file_dir)}' contains directory traversal sequences")
    for what, part in (("file_name", file_name), ("file_ext", file_ext)):
        if any(c in part for c in "/\\\0") or part in (".", ".."):
            raise ToolError(f"{what} '{quoted(part)}' is not a name: it may not hold a / or \\ (give the folder as file_dir)")
    folder = file_dir or document_dir(doc)
    if not os.path.isabs(folder):
        folder = os.path.join(document_dir(doc), folder)
    folder = os.path.realpath(folder)
    if not inside_workspace(folder):
        raise ToolError(f"'{quoted(file_dir)}' is outside the task's workspace, where files are saved")
    ext = file_ext or default_ext
    if not ext.startswith("."):
        ext = "." + ext
    path = os.path.join(folder, (file_name or document_stem(doc)) + ext)
    if os.path.dirname(path) != folder or not inside_workspace(path):
        raise ToolError(f"'{quoted(path)}' is outside the task's workspace, where files are saved")
    os.makedirs(folder, exist_ok=True)
    return path, ext.lower()


def store(doc, path, filter_name, rebind, options=None):
    args = {"FilterName": filter_name, "Overwrite": True}
    if options:
        args["FilterOptions"] = options
    url = uno.systemPathToFileUrl(path)
    if rebind:
        doc.storeAsURL(url, props(**args))
    else:
        doc.storeToURL(url, props(**args))


# ---------------------------------------------------------------- Word (Writer)

def paragraphs(doc):
    out = []
    e = doc.Text.createEnumeration()
    while e.hasMoreElements():
        p = e.nextElement()
        if p.supportsService("com.sun.star.text.Paragraph"):
            out.append(p)
    return out


def insert_table(doc, rows, columns):
    text = doc.Text
    text.insertControlCharacter(text.getEnd(), 0, False)  # PARAGRAPH_BREAK
    table = doc.createInstance("com.sun.star.text.TextTable")
    table.initialize(rows, columns)
    text.insertTextContent(text.getEnd(), table, False)
    return f"Table with {rows} rows and {columns} columns is inserted."


def select_text(doc, text):
    search = doc.createSearchDescriptor()
    search.SearchString = text
    found = doc.findFirst(search)
    if found is None:
        # UFO answers this as a result; a selection that did not happen is a failure
        # here (nothing reports success without acting), with UFO's words.
        raise ToolError(f"Text {quoted(text)} is not found.")
    doc.CurrentController.select(found)
    return f"Text {quoted(text)} is selected."


def select_table(doc, number):
    tables = [doc.TextTables.getByIndex(i) for i in range(doc.TextTables.Count)]
    if not number or number < 1 or number > len(tables):
        raise ToolError(f"Table number {number} is out of range.")
    # In document order (TextTables is creation order).
    compare = doc.Text.compareRegionStarts
    import functools
    tables.sort(key=functools.cmp_to_key(lambda a, b: -compare(a.Anchor, b.Anchor)))
    table = tables[number - 1]
    last = table.getCellNames()[-1]
    doc.CurrentController.select(table.getCellRangeByName("A1:" + last))
    return f"Table {number} is selected."


def select_paragraph(doc, start_index, end_index, non_empty=True):
    try:
        found = paragraphs(doc)
        start_index = max(1, start_index)
        if non_empty:
            found = [p for p in found if p.getString().strip()]
        cursor = doc.Text.createTextCursorByRange(found[start_index - 1].getStart())
        end = doc.Text.getEnd() if end_index == -1 else found[end_index - 1].getEnd()
        cursor.gotoRange(end, True)
        doc.CurrentController.select(cursor)
        return f"Paragraph from {start_index} to {end_index} is selected."
    except IndexError as e:
        raise ToolError(f"Error occurred while selecting paragraph: {e}")


def set_font(doc, font_name=None, font_size=None):
    selection = doc.CurrentController.getSelection()
    ranges = []
    if selection is not None and hasattr(selection, "getCount"):
        ranges = [selection.getByIndex(i) for i in range(selection.getCount())]
    ranges = [r for r in ranges if hasattr(r, "getString") and r.getString()]
    if not font_name and not font_size:
        raise ToolError("set_font needs a font_name or a font_size")
    if not ranges:
        raise ToolError("No text is selected to set the font: select it first (select_text, select_paragraph)")
    message = ""
    for r in ranges:
        if font_name:
            for key in ("CharFontName", "CharFontNameAsian", "CharFontNameComplex"):
                r.setPropertyValue(key, font_name)
        if font_size:
            for key in ("CharHeight", "CharHeightAsian", "CharHeightComplex"):
                r.setPropertyValue(key, float(font_size))
    if font_name:
        message += f"Font is set to {font_name}."
    if font_size:
        message += f" Font size is set to {font_size}."
    return message


WORD_FORMATS = {
    ".pdf": ("writer_pdf_Export", False),
    ".docx": ("MS Word 2007 XML", True),
    ".doc": ("MS Word 97", True),
    ".odt": ("writer8", True),
    ".rtf": ("Rich Text Format", True),
    ".txt": ("Text", False),
    ".html": ("HTML (StarWriter)", False),
    ".htm": ("HTML (StarWriter)", False),
}


def word_save_as(doc, file_dir="", file_name="", file_ext=""):
    path, ext = save_path(doc, file_dir, file_name, file_ext, ".pdf")
    filter_name, rebind = WORD_FORMATS.get(ext, WORD_FORMATS[".pdf"])
    store(doc, path, filter_name, rebind)
    return f"Document is saved to {shown(path)}."


# ---------------------------------------------------------------- Excel (Calc)

def column_number(col):
    if isinstance(col, str) and col.isalpha():
        n = 0
        for ch in col.upper():
            n = n * 26 + (ord(ch) - 64)
        return n
    return int(col)


def sheet_or_first(doc, sheet_name):
    sheets = doc.Sheets
    if isinstance(sheet_name, str) and sheets.hasByName(sheet_name):
        return sheets.getByName(sheet_name)
    # UFO: "Sheet {sheet_name} not found in the workbook, using the first sheet."
    return sheets.getByIndex(0)


def used_area(sheet):
    cursor = sheet.createCursor()
    cursor.gotoStartOfUsedArea(False)
    cursor.gotoEndOfUsedArea(True)
    return cursor.getRangeAddress()


def insert_excel_table(doc, table, sheet_name, start_row, start_col):
    try:
        if not doc.Sheets.hasByName(sheet_name):
            raise ToolError(f"no sheet named {sheet_name!r}")
        sheet = doc.Sheets.getByName(sheet_name)
        start_col = column_number(start_col)
        for i, row in enumerate(table):
            for j, value in enumerate(row):
                cell = sheet.getCellByPosition(start_col - 1 + j, start_row - 1 + i)
                # As Excel's `.Value =` takes it: numbers, and text that may be a number
                # or a formula.
                if isinstance(value, bool):
                    cell.setValue(1 if value else 0)
                elif isinstance(value, (int, float)):
                    cell.setValue(value)
                elif value is None:
                    cell.setString("")
                else:
                    cell.setFormula(str(value))
        return f"Table inserted successfully into {sheet_name}."
    except ToolError as e:
        raise ToolError(f"Error occurred while inserting table into {sheet_name}: {e}")


def select_table_range(doc, sheet_name, start_row, start_col, end_row, end_col):
    sheet = sheet_or_first(doc, sheet_name)
    start_col, end_col = column_number(start_col), column_number(end_col)
    if end_row == -1:
        end_row = 1048576
    if end_col == -1:
        end_col = 16384
    doc.CurrentController.setActiveSheet(sheet)
    doc.CurrentController.select(sheet.getCellRangeByPosition(start_col - 1, start_row - 1, end_col - 1, end_row - 1))
    return f"Range {start_row}:{start_col} to {end_row}:{end_col} is selected."


def reorder_columns(doc, sheet_name, desired_order):
    if not doc.Sheets.hasByName(sheet_name):
        raise ToolError(f"Error occurred while reordering columns: no sheet named {sheet_name!r}")
    sheet = doc.Sheets.getByName(sheet_name)
    area = used_area(sheet)
    within_cells(area.EndRow - area.StartRow + 1, area.EndColumn - area.StartColumn + 1, "the sheet's used block")
    block = sheet.getCellRangeByPosition(area.StartColumn, area.StartRow, area.EndColumn, area.EndRow)
    rows = [list(r) for r in block.getFormulaArray()]
    # The headers are the used block's first row (UFO reads row 1 only, so a table that
    # starts lower is silently left as it was).
    headers = [str(h).strip() for h in rows[0]]
    order = [headers.index(name) for name in desired_order if name in headers]
    if not order:
        raise ToolError(
            f"Error occurred while reordering columns: none of {quoted(desired_order)} is a column header ({quoted(headers)})")
    reordered = [[row[i] for i in order] + [""] * (len(headers) - len(order)) for row in rows]
    block.setFormulaArray(tuple(tuple(r) for r in reordered))
    return f"Columns reordered successfully into: {quoted(desired_order)}"


def get_range_values(doc, sheet_name, start_row, start_col, end_row=-1, end_col=-1):
    sheet = sheet_or_first(doc, sheet_name)
    area = used_area(sheet)
    if end_row == -1:
        end_row = area.EndRow + 1
    if end_col == -1:
        end_col = area.EndColumn + 1
    start_col, end_col = column_number(start_col), column_number(end_col)
    within_cells(end_row - start_row + 1, end_col - start_col + 1, f"the range {start_row}:{start_col} to {end_row}:{end_col}")
    block = sheet.getCellRangeByPosition(start_col - 1, start_row - 1, end_col - 1, end_row - 1)
    # An empty cell is None, as Excel gives it: the empty cells asked of the office in one
    # call (a call per cell takes minutes over 100,000 of them).
    empty = set()
    for a in block.queryEmptyCells().getRangeAddresses():
        for r in range(a.StartRow, a.EndRow + 1):
            for c in range(a.StartColumn, a.EndColumn + 1):
                empty.add((r - start_row + 1, c - start_col + 1))
    return [
        [None if value == "" and (r, c) in empty else value for c, value in enumerate(row)]
        for r, row in enumerate(block.getDataArray())
    ]


EXCEL_FORMATS = {
    ".csv": ("Text - txt - csv (StarCalc)", False, "44,34,76,1"),
    ".txt": ("Text - txt - csv (StarCalc)", False, "9,34,76,1"),
    ".xlsx": ("Calc MS Excel 2007 XML", True, None),
    ".xls": ("MS Excel 97", True, None),
    ".ods": ("calc8", True, None),
    ".pdf": ("calc_pdf_Export", False, None),
    ".html": ("HTML (StarCalc)", False, None),
    ".htm": ("HTML (StarCalc)", False, None),
}


def excel_save_as(doc, file_dir="", file_name="", file_ext=""):
    path, ext = save_path(doc, file_dir, file_name, file_ext, ".csv")
    filter_name, rebind, options = EXCEL_FORMATS.get(ext, EXCEL_FORMATS[".csv"])
    store(doc, path, filter_name, rebind, options)
    return f"Document is saved to {shown(path)}."


# ---------------------------------------------------------------- PowerPoint (Impress)

def set_background_color(doc, color, slide_index=None):
    pages = doc.DrawPages
    indexes = slide_index if slide_index else range(1, pages.Count + 1)
    hex_digits = color.strip().lstrip("#") if isinstance(color, str) else ""
    if len(hex_digits) != 6 or any(c not in "0123456789abcdefABCDEF" for c in hex_digits):
        raise ToolError(f"Failed to set the background color: {color!r} is not a colour as hex RRGGBB (such as FF0000)")
    missing = [i for i in indexes if not isinstance(i, int) or i < 1 or i > pages.Count]
    if missing:
        raise ToolError(
            f"Failed to set the background color: no slide {missing[0]!r} (the slides are 1 to {pages.Count})"
        )
    try:
        rgb = int(hex_digits, 16)
        for index in indexes:
            background = doc.createInstance("com.sun.star.drawing.Background")
            background.FillStyle = uno.Enum("com.sun.star.drawing.FillStyle", "SOLID")
            background.FillColor = rgb
            pages.getByIndex(index - 1).Background = background
        return f"Successfully Set the background color to {color} for slide(s) {indexes}."
    except ValueError as e:
        raise ToolError(f"Failed to set the background color. Error: {e}")


PPT_FORMATS = {
    ".pptx": ("Impress MS PowerPoint 2007 XML", True),
    ".ppt": ("MS PowerPoint 97", True),
    ".odp": ("impress8", True),
    ".pdf": ("impress_pdf_Export", False),
}
IMAGES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".bmp": "image/bmp"}


def export_page(page, path, mime):
    exporter = service("com.sun.star.drawing.GraphicExportFilter")
    exporter.setSourceDocument(page)
    exporter.filter(props(URL=uno.systemPathToFileUrl(path), MediaType=mime))


def ppt_save_as(doc, file_dir="", file_name="", file_ext="", current_slide_only=False):
    path, ext = save_path(doc, file_dir, file_name, file_ext, ".pptx")
    pages = doc.DrawPages
    if ext in IMAGES:
        if pages.Count == 1 or current_slide_only:
            page = doc.CurrentController.CurrentPage if current_slide_only else pages.getByIndex(0)
            export_page(page, path, IMAGES[ext])
        else:
            # As PowerPoint saves every slide as an image: a folder of Slide1..SlideN.
            folder = os.path.splitext(path)[0]
            os.makedirs(folder, exist_ok=True)
            for i in range(pages.Count):
                export_page(pages.getByIndex(i), os.path.join(folder, f"Slide{i + 1}{ext}"), IMAGES[ext])
        return f"Document is saved to {shown(path)}."
    filter_name, rebind = PPT_FORMATS.get(ext, PPT_FORMATS[".pptx"])
    store(doc, path, filter_name, rebind)
    return f"Document is saved to {shown(path)}."


TOOLS = {
    "word": {
        "insert_table": insert_table,
        "select_text": select_text,
        "select_table": select_table,
        "select_paragraph": select_paragraph,
        "save_as": word_save_as,
        "set_font": set_font,
    },
    "excel": {
        "insert_excel_table": insert_excel_table,
        "select_table_range": select_table_range,
        "save_as": excel_save_as,
        "reorder_columns": reorder_columns,
        "get_range_values": get_range_values,
    },
    "powerpoint": {
        "set_background_color": set_background_color,
        "save_as": ppt_save_as,
    },
}


def answer(request):
    app, tool = request.get("app"), request.get("tool")
    function = TOOLS.get(app, {}).get(tool)
    if function is None:
        raise ToolError(f"`{tool}` is not one of the {NAMES.get(app, app)} tools")
    doc = document(app)
    try:
        return function(doc, **(request.get("args") or {}))
    except ToolError:
        raise
    except TypeError as e:
        raise ToolError(f"Failed to execute action {tool}: {e}")
    except Exception as e:  # what UFO's server says of an action that raised
        raise ToolError(f"Failed to execute action {tool}: {getattr(e, 'Message', None) or e}")


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            print(json.dumps({"id": None, "error": f"not JSON: {e}"}), flush=True)
            continue
        try:
            reply = {"id": request.get("id"), "ok": answer(request)}
        except ToolError as e:
            reply = {"id": request.get("id"), "error": str(e)}
        except Exception as e:
            reply = {"id": request.get("id"), "error": f"Failed to execute action {request.get('tool')}: {e}"}
        print(json.dumps(reply, default=str), flush=True)


if __name__ == "__main__":
    main()
