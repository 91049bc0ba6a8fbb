# ufo-batch's Office API helper on Windows: UFO's Office COM tools
# (ufo/client/mcp/local_servers/word_wincom_mcp_server.py, excel_wincom_mcp_server.py,
# ppt_wincom_mcp_server.py, carried out by ufo/automator/app_apis/{word,excel,powerpoint})
# done the same way, over COM, on the task's live Word, Excel or PowerPoint document.
#
# Windows PowerShell 5.1 (powershell.exe, on every Windows) runs it, started by the
# runner in the task's workspace. It speaks JSON lines on its standard input and output:
# a request {"id", "app": "word"|"excel"|"powerpoint", "tool", "args"} gets one answer
# {"id", "ok": RESULT} or {"id", "error": WHY}. The document is the one whose path is its
# first argument, else the app's active one. Names, parameters, 1-based indexes and result
# texts are UFO's; where ufo-batch differs (a call that did not act fails; a saved file
# stays in the workspace and is shown relative to it; a PowerPoint colour may start with
# '#'; columns are reordered under the used block's header row) the README's tool table
# says so, and the Linux helper (uno_helper.py) does the same.
#
# usage: powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -File com_helper.ps1 [DOCUMENT_PATH]

param([string]$Document = "")

$ErrorActionPreference = "Stop"
[Console]::InputEncoding = New-Object System.Text.UTF8Encoding $false
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false

$Workspace = (Get-Location).ProviderPath
if ($Document) { $Document = [IO.Path]::GetFullPath($Document) }
$ProgIds = @{ word = "Word.Application"; excel = "Excel.Application"; powerpoint = "PowerPoint.Application" }
$Names = @{ word = "Word"; excel = "Excel"; powerpoint = "PowerPoint" }

class ToolError : System.Exception {
    ToolError([string]$message) : base($message) {}
}

function Fail([string]$message) { throw [ToolError]::new($message) }

# The app's running instance, as UFO's WinCOMReceiverBasic gets it.
function Get-App([string]$app) {
    try { return [Runtime.InteropServices.Marshal]::GetActiveObject($ProgIds[$app]) }
    catch { Fail "no $($Names[$app]) is running" }
}

# The task's document (by its path), else the app's active one (UFO's app_match).
function Get-Document([string]$app) {
    $office = Get-App $app
    $open = switch ($app) {
        "word" { $office.Documents }
        "excel" { $office.Workbooks }
        "powerpoint" { $office.Presentations }
    }
    $first = $null
    foreach ($doc in $open) {
        if ($Document -and [string]::Equals($doc.FullName, $Document, [StringComparison]::OrdinalIgnoreCase)) { return $doc }
        if ($null -eq $first) { $first = $doc }
    }
    if ($null -ne $first) { return $first }
    Fail "no $($Names[$app]) document is open"
}

# A saved file's path as results show it: relative to the workspace when it is in it.
function Shown([string]$path) {
    $root = $Workspace.TrimEnd('\') + '\'
    if ($path.StartsWith($root, [StringComparison]::OrdinalIgnoreCase)) {
        return $path.Substring($root.Length).Replace('\', '/')
    }
    return $path
}

# UFO's save_as defaults (the document's folder and name, the app's default extension),
# refused as its validate_save_path refuses '..', and kept in the task's workspace.
function Save-Path($doc, $a, [string]$defaultExt) {
    $dir = [string]$a.file_dir
    if ($dir -split '[\\/]' -contains '..') { Fail "Path '$dir' contains directory traversal sequences" }
    $docDir = Split-Path -Parent $doc.FullName
    if (-not $docDir) { $docDir = $Workspace }
    $folder = if (-not $dir) { $docDir } elseif ([IO.Path]::IsPathRooted($dir)) { $dir } else { Join-Path $docDir $dir }
    $folder = [IO.Path]::GetFullPath($folder)
    $root = $Workspace.TrimEnd('\')
    if (-not ($folder.Equals($root, [StringComparison]::OrdinalIgnoreCase) -or
              $folder.StartsWith($root + '\', [StringComparison]::OrdinalIgnoreCase))) {
        Fail "'$dir' is outside the task's workspace, where files are saved"
    }
    [void][IO.Directory]::CreateDirectory($folder)
    $ext = [string]$a.file_ext
    if (-not $ext) { $ext = $defaultExt }
    if (-not $ext.StartsWith('.')) { $ext = '.' + $ext }
    $name = [string]$a.file_name
    if (-not $name) { $name = [IO.Path]::GetFileNameWithoutExtension($doc.FullName) }
    return @((Join-Path $folder ($name + $ext)), $ext.ToLowerInvariant())
}

function Column-Number($col) {
    if ($col -is [string] -and $col -match '^[A-Za-z]+$') {
        $n = 0
        foreach ($ch in $col.ToUpperInvariant().ToCharArray()) { $n = $n * 26 + ([int]$ch - 64) }
        return $n
    }
    return [int]$col
}

# ------------------------------------------------------------------------------ Word

function Word-InsertTable($doc, $a) {
    $end = $doc.Range()
    $end.Collapse(0)
    $end.InsertParagraphAfter()
    $table = $doc.Tables.Add($end, [int]$a.rows, [int]$a.columns)
    $table.Borders.Enable = $true
    "Table with $($a.rows) rows and $($a.columns) columns is inserted."
}

function Word-SelectText($doc, $a) {
    $finder = $doc.Range().Find
    $finder.Text = [string]$a.text
    if ($finder.Execute()) {
        $finder.Parent.Select()
        return "Text $($a.text) is selected."
    }
    Fail "Text $($a.text) is not found."
}

function Word-SelectTable($doc, $a) {
    $n = [int]$a.number
    if ($n -lt 1 -or $n -gt $doc.Tables.Count) { Fail "Table number $($a.number) is out of range." }
    $doc.Tables.Item($n).Select()
    "Table $n is selected."
}

function Word-SelectParagraph($doc, $a) {
    $nonEmpty = if ($null -eq $a.non_empty) { $true } else { [bool]$a.non_empty }
    $found = @()
    foreach ($p in $doc.Paragraphs) {
        if (-not $nonEmpty -or $p.Range.Text.Trim()) { $found += $p }
    }
    $start = [Math]::Max(1, [int]$a.start_index)
    $endIndex = [int]$a.end_index
    if ($start -gt $found.Count -or ($endIndex -ne -1 -and ($endIndex -lt 1 -or $endIndex -gt $found.Count))) {
        Fail "Error occurred while selecting paragraph: list index out of range"
    }
    $from = $found[$start - 1].Range.Start
    $to = if ($endIndex -eq -1) { $doc.Range().End } else { $found[$endIndex - 1].Range.End }
    $doc.Range($from, $to).Select()
    "Paragraph from $start to $endIndex is selected."
}

function Word-SetFont($doc, $a) {
    if (-not $a.font_name -and -not $a.font_size) { Fail "set_font needs a font_name or a font_size" }
    $selection = $doc.Application.Selection
    # wdNoSelection (0) and wdSelectionIP (1, a cursor): no text to set.
    if ($selection.Type -le 1) { Fail "No text is selected to set the font: select it first (select_text, select_paragraph)" }
    $font = $selection.Range.Font
    $message = ""
    if ($a.font_name) { $font.Name = [string]$a.font_name; $message += "Font is set to $($a.font_name)." }
    if ($a.font_size) { $font.Size = [double]$a.font_size; $message += " Font size is set to $($a.font_size)." }
    $message
}

$WordFormats = @{ ".doc" = 0; ".dot" = 1; ".txt" = 2; ".rtf" = 6; ".htm" = 8; ".html" = 8; ".mht" = 9;
    ".xml" = 11; ".docx" = 12; ".docm" = 13; ".dotx" = 14; ".dotm" = 15; ".pdf" = 17; ".xps" = 18 }

function Word-SaveAs($doc, $a) {
    $path, $ext = Save-Path $doc $a ".pdf"
    $format = if ($WordFormats.ContainsKey($ext)) { $WordFormats[$ext] } else { 17 }
    $doc.SaveAs2($path, $format)
    "Document is saved to $(Shown $path)."
}

# ----------------------------------------------------------------------------- Excel

# The sheet by name, else (as UFO does for a selection or a read) the first one.
function Sheet-OrFirst($book, $name) {
    foreach ($sheet in $book.Sheets) { if ($sheet.Name -eq $name) { return $sheet } }
    return $book.Sheets.Item(1)
}

function Sheet-Named($book, $name, [string]$doing) {
    foreach ($sheet in $book.Sheets) { if ($sheet.Name -eq $name) { return $sheet } }
    Fail "Error occurred while ${doing}: no sheet named '$name'"
}

function Excel-InsertTable($book, $a) {
    $sheet = Sheet-Named $book $a.sheet_name "inserting table into $($a.sheet_name)"
    $row0 = [int]$a.start_row
    $col0 = Column-Number $a.start_col
    $i = 0
    foreach ($row in $a.table) {
        $j = 0
        foreach ($value in $row) {
            # As UFO's `.Value =`: text that is a number or a formula becomes one.
            $sheet.Cells.Item($row0 + $i, $col0 + $j).Value2 = $value
            $j++
        }
        $i++
    }
    "Table inserted successfully into $($a.sheet_name)."
}

function Excel-SelectRange($book, $a) {
    $sheet = Sheet-OrFirst $book $a.sheet_name
    $sc = Column-Number $a.start_col
    $ec = Column-Number $a.end_col
    $er = [int]$a.end_row
    if ($er -eq -1) { $er = $sheet.Rows.Count }
    if ($ec -eq -1) { $ec = $sheet.Columns.Count }
    # Excel selects on the active sheet only.
    $sheet.Activate()
    $sheet.Range($sheet.Cells.Item([int]$a.start_row, $sc), $sheet.Cells.Item($er, $ec)).Select() | Out-Null
    "Range $($a.start_row):$sc to ${er}:$ec is selected."
}

# A range's values as rows (Value2 is a 2-D array from 1, or one value for one cell).
function Range-Rows($range) {
    $values = $range.Value2
    $rows = New-Object System.Collections.ArrayList
    if ($values -isnot [Array]) {
        [void]$rows.Add(@(, $values))
        return , $rows.ToArray()
    }
    for ($r = $values.GetLowerBound(0); $r -le $values.GetUpperBound(0); $r++) {
        $row = New-Object System.Collections.ArrayList
        for ($c = $values.GetLowerBound(1); $c -le $values.GetUpperBound(1); $c++) { [void]$row.Add($values[$r, $c]) }
        [void]$rows.Add($row.ToArray())
    }
    return , $rows.ToArray()
}

function Excel-GetRange($book, $a) {
    $sheet = Sheet-OrFirst $book $a.sheet_name
    $used = $sheet.UsedRange
    $er = if ($null -eq $a.end_row) { -1 } else { [int]$a.end_row }
    $ec = if ($null -eq $a.end_col) { -1 } else { Column-Number $a.end_col }
    if ($er -eq -1) { $er = $used.Row + $used.Rows.Count - 1 }
    if ($ec -eq -1) { $ec = $used.Column + $used.Columns.Count - 1 }
    $range = $sheet.Range($sheet.Cells.Item([int]$a.start_row, (Column-Number $a.start_col)), $sheet.Cells.Item($er, $ec))
    return , (Range-Rows $range)
}

function Excel-ReorderColumns($book, $a) {
    $sheet = Sheet-Named $book $a.sheet_name "reordering columns"
    $used = $sheet.UsedRange
    $formulas = $used.Formula
    if ($formulas -isnot [Array]) { Fail "Error occurred while reordering columns: the sheet has one cell" }
    $rows = $formulas.GetLength(0)
    $cols = $formulas.GetLength(1)
    $r0 = $formulas.GetLowerBound(0)
    $c0 = $formulas.GetLowerBound(1)
    # The headers are the used block's first row.
    $headers = @(for ($c = 0; $c -lt $cols; $c++) { ([string]$formulas[$r0, ($c0 + $c)]).Trim() })
    $order = @(foreach ($name in $a.desired_order) { $i = [Array]::IndexOf($headers, [string]$name); if ($i -ge 0) { $i } })
    if ($order.Count -eq 0) {
        Fail "Error occurred while reordering columns: none of $($a.desired_order -join ', ') is a column header ($($headers -join ', '))"
    }
    $out = New-Object 'object[,]' $rows, $cols
    for ($r = 0; $r -lt $rows; $r++) {
        for ($c = 0; $c -lt $cols; $c++) {
            $out[$r, $c] = if ($c -lt $order.Count) { $formulas[($r0 + $r), ($c0 + $order[$c])] } else { "" }
        }
    }
    $used.Formula = $out
    "Columns reordered successfully into: ['$($a.desired_order -join "', '")']"
}

$ExcelFormats = @{ ".xlsx" = 51; ".xlsm" = 52; ".xlsb" = 50; ".xls" = 56; ".xltx" = 54; ".xltm" = 53; ".csv" = 6;
    ".txt" = 42; ".pdf" = 57; ".xps" = 58; ".xml" = 46; ".html" = 44; ".htm" = 44; ".prn" = 36 }

function Excel-SaveAs($book, $a) {
    $path, $ext = Save-Path $book $a ".csv"
    if ($ext -eq ".pdf" -or $ext -eq ".xps") {
        # Excel exports these (SaveAs refuses them): 0 is PDF, 1 XPS.
        $book.ExportAsFixedFormat([int]($ext -eq ".xps"), $path)
    } else {
        $format = if ($ExcelFormats.ContainsKey($ext)) { $ExcelFormats[$ext] } else { 6 }
        $book.Application.DisplayAlerts = $false
        $book.SaveAs($path, $format)
    }
    "Document is saved to $(Shown $path)."
}

# ------------------------------------------------------------------------ PowerPoint

function Ppt-SetBackground($pres, $a) {
    $hex = ([string]$a.color).Trim().TrimStart('#')
    if ($hex -notmatch '^[0-9A-Fa-f]{6}$') {
        Fail "Failed to set the background color: '$($a.color)' is not a colour as hex RRGGBB (such as FF0000)"
    }
    $count = $pres.Slides.Count
    $indexes = if ($a.slide_index) { @($a.slide_index) } else { 1..$count }
    # As UFO's message prints them: the list given, or Python's range of every slide.
    $said = if ($a.slide_index) { "[$($indexes -join ', ')]" } else { "range(1, $($count + 1))" }
    foreach ($i in $indexes) {
        if ($i -lt 1 -or $i -gt $count) { Fail "Failed to set the background color: no slide $i (the slides are 1 to $count)" }
    }
    $red = [Convert]::ToInt32($hex.Substring(0, 2), 16)
    $green = [Convert]::ToInt32($hex.Substring(2, 2), 16)
    $blue = [Convert]::ToInt32($hex.Substring(4, 2), 16)
    foreach ($i in $indexes) {
        $slide = $pres.Slides.Item([int]$i)
        $slide.FollowMasterBackground = 0
        $slide.Background.Fill.Visible = -1
        $slide.Background.Fill.Solid()
        # PowerPoint's colours are BGR.
        $slide.Background.Fill.ForeColor.RGB = ($blue -shl 16) + ($green -shl 8) + $red
    }
    "Successfully Set the background color to $($a.color) for slide(s) $said."
}

$PptFormats = @{ ".pptx" = 24; ".ppt" = 0; ".pdf" = 32; ".xps" = 33; ".potx" = 25; ".pot" = 5; ".ppsx" = 27;
    ".pps" = 1; ".odp" = 35; ".jpg" = 17; ".png" = 18; ".gif" = 19; ".bmp" = 20; ".tif" = 21; ".tiff" = 21;
    ".rtf" = 6; ".html" = 12; ".mp4" = 39; ".wmv" = 38; ".xml" = 10 }
$PptImages = @{ ".jpg" = "JPG"; ".png" = "PNG"; ".gif" = "GIF"; ".bmp" = "BMP"; ".tif" = "TIF"; ".tiff" = "TIF" }

function Ppt-SaveAs($pres, $a) {
    $path, $ext = Save-Path $pres $a ".pptx"
    if ($PptImages.ContainsKey($ext) -and ($pres.Slides.Count -eq 1 -or $a.current_slide_only)) {
        $index = if ($a.current_slide_only) { $pres.Windows.Item(1).View.Slide.SlideIndex } else { 1 }
        $pres.Slides.Item($index).Export($path, $PptImages[$ext])
    } else {
        $format = if ($PptFormats.ContainsKey($ext)) { $PptFormats[$ext] } else { 24 }
        $pres.SaveAs($path, $format)
    }
    "Document is saved to $(Shown $path)."
}

# ------------------------------------------------------------------------------ calls

$Tools = @{
    word = @{ insert_table = "Word-InsertTable"; select_text = "Word-SelectText"; select_table = "Word-SelectTable";
        select_paragraph = "Word-SelectParagraph"; save_as = "Word-SaveAs"; set_font = "Word-SetFont" }
    excel = @{ insert_excel_table = "Excel-InsertTable"; select_table_range = "Excel-SelectRange"; save_as = "Excel-SaveAs";
        reorder_columns = "Excel-ReorderColumns"; get_range_values = "Excel-GetRange" }
    powerpoint = @{ set_background_color = "Ppt-SetBackground"; save_as = "Ppt-SaveAs" }
}

function Answer($request) {
    $app = [string]$request.app
    $tool = [string]$request.tool
    if (-not $Tools.ContainsKey($app) -or -not $Tools[$app].ContainsKey($tool)) {
        Fail "``$tool`` is not one of the $($Names[$app]) tools"
    }
    $doc = Get-Document $app
    $a = $request.args
    if ($null -eq $a) { $a = New-Object PSObject }
    # What the tool wrote last is its answer (a COM call may write a value before it);
    # the comma keeps a list of rows one answer.
    try { $out = @(& $Tools[$app][$tool] $doc $a); return , $out[-1] }
    catch [ToolError] { throw }
    catch { Fail "Failed to execute action ${tool}: $($_.Exception.Message)" }
}

while ($null -ne ($line = [Console]::In.ReadLine())) {
    if (-not $line.Trim()) { continue }
    $id = $null
    try {
        $request = $line | ConvertFrom-Json
        $id = $request.id
        $result = Answer $request
        $reply = [ordered]@{ id = $id; ok = $result }
    } catch {
        $reply = [ordered]@{ id = $id; error = $_.Exception.Message }
    }
    [Console]::Out.WriteLine((ConvertTo-Json -InputObject $reply -Compress -Depth 10))
    [Console]::Out.Flush()
}
