# trainprof(1) in roff, from the help texts trainprof prints. scripts/gen-man.sh
# feeds them in: a line "@@top" then `trainprof --help`, then for each command
# a line "@@command NAME" then `trainprof NAME --help`. Nothing here restates
# the help: a change to it changes the page at the next build.
#
# What the help texts look like (src/cli/main.c, src/cli/cmd_*.c): a
# "usage: " line (more forms on lines that start with "trainprof", or
# continued on indented lines), then paragraphs separated by blank lines, and
# lists introduced by a line "NAME:" ("options:", "commands:",
# "environment:") whose items start two spaces in ("  --top N  text"; the
# term ends at the first two spaces) and continue on lines indented further.
# The top-level text ends its last paragraph with "Exit codes: 0 ok, 1 ...".
#
# POSIX awk only (Debian's mawk): no gensub, no backreferences.

function trim(s) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t]+$/, "", s)
    return s
}

# Text escaped for roff: backslashes, and minus signs for the dashes of an
# option (--class-rule, typed as written; a hyphen inside a word stays one).
function esc(s,    out, i, c, prev, in_option) {
    out = ""
    prev = " "
    in_option = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "-" && index(" ([|,/'`", prev) > 0) in_option = 1
        else if (index(" =,)]'`", c) > 0) in_option = 0
        if (c == "\\") out = out "\\e"
        else if (c == "-" && in_option) out = out "\\-"
        else out = out c
        prev = c
    }
    return out
}

# One line of filled text; a leading '.' or "'" would be read as a request.
function text_line(s) {
    s = esc(s)
    if (s ~ /^[.']/) s = "\\&" s
    return s "\n"
}

# Words of a synopsis or an option's term: options and the program bold,
# placeholders (upper case) italic, lower-case words bold when LITERAL
# (values such as table|csv|json) and roman otherwise ("[options]").
function fmt_words(s, literal,    n, w, i, out, t, pre, post, f) {
    n = split(s, w, " ")
    out = ""
    for (i = 1; i <= n; i++) {
        t = w[i]
        pre = ""
        post = ""
        while (t != "" && index("([", substr(t, 1, 1)) > 0) {
            pre = pre substr(t, 1, 1)
            t = substr(t, 2)
        }
        while (t != "" && index(")],.", substr(t, length(t), 1)) > 0) {
            post = substr(t, length(t), 1) post
            t = substr(t, 1, length(t) - 1)
        }
        if (t == "") f = ""
        else if (t ~ /^-/ || t == "trainprof" || t == cmd) f = "\\fB" esc(t) "\\fR"
        else if (t ~ /^[A-Z]/) f = "\\fI" esc(t) "\\fR"
        else if (literal && t ~ /^[a-z]/) f = "\\fB" esc(t) "\\fR"
        else f = esc(t)
        out = out (i > 1 ? " " : "") pre f post
    }
    return out
}

# The pending paragraph, synopsis or list goes to the block's output.
function flush(    i, out) {
    out = ""
    if (state == "usage") {
        out = ".PP\n.nf\n"
        for (i = 1; i <= nsyn; i++) out = out syn[i] "\n"
        out = out ".fi\n"
        if (block == "top") { synopsis = out; out = "" }
    } else if (state == "para" || state == "exit") {
        if (para != "") out = ".PP\n" para
        if (block == "top" && nparas++ == 0) first_para = first_line
    } else if (state == "list") {
        for (i = 1; i <= nitems; i++) {
            if (list == "environment") out = out ".TP\n.B " esc(term[i]) "\n" desc[i]
            else out = out ".TP\n" fmt_words(term[i], 1) "\n" desc[i]
        }
        if (list == "options") out = ".PP\nOptions:\n" out
        if (block == "top" && list == "environment") { environment = out; out = "" }
        if (block == "top" && list == "commands") out = "" # the COMMANDS section lists them
    }
    if (block == "top") description = description out
    else body = body out
    state = ""
    para = ""
    nsyn = 0
    nitems = 0
}

function start_block(line) {
    flush()
    if (block == "command") commands = commands body
    body = ""
    if (line == "@@top") {
        block = "top"
        cmd = ""
    } else {
        block = "command"
        cmd = substr(line, 11)
        body = ".SS " cmd "\n"
        if (cmd in summary) body = body text_line(summary[cmd])
    }
}

function add_synopsis(s) {
    s = trim(s)
    if (s ~ /^trainprof /) syn[++nsyn] = fmt_words(s, 0)
    else syn[++nsyn] = "    " fmt_words(s, 0)
}

/^@@(top|command [a-z][a-z-]*)$/ { start_block($0); next }

$0 == "" { flush(); next }

state == "" && /^usage: / { state = "usage"; add_synopsis(substr($0, 8)); next }
state == "usage" { add_synopsis($0); next }

state == "" && /^[a-z]+:$/ { state = "list"; list = substr($0, 1, length($0) - 1); next }
state == "list" {
    if ($0 ~ /^  [^ ]/) {
        t = substr($0, 3)
        i = index(t, "  ")
        nitems++
        if (i > 0) {
            term[nitems] = substr(t, 1, i - 1)
            desc[nitems] = text_line(trim(substr(t, i)))
        } else {
            term[nitems] = t
            desc[nitems] = ""
        }
        if (block == "top" && list == "commands") summary[term[nitems]] = trim(substr(t, i))
    } else {
        desc[nitems] = desc[nitems] text_line(trim($0))
    }
    next
}

# the exit codes end the top-level text's last paragraph
block == "top" && /^Exit codes: / {
    if (state == "para") flush()
    state = "exit"
    exit_codes = substr($0, 13)
    next
}
state == "exit" { exit_codes = exit_codes " " trim($0); next }

{
    if (state == "") {
        state = "para"
        first_line = trim($0)
    }
    para = para text_line(trim($0))
}

# "0 ok, 1 a check failed, ..." as one item per code
function exit_status(s,    out, m) {
    sub(/\.$/, "", s)
    out = ""
    while ((m = match(s, /, [0-9] /)) > 0) {
        out = out ".TP\n.B " substr(s, 1, 1) "\n" text_line(substr(s, 3, m - 3))
        s = substr(s, m + 2)
    }
    return out ".TP\n.B " substr(s, 1, 1) "\n" text_line(substr(s, 3))
}

END {
    start_block("@@top")
    name = first_para
    sub(/\.$/, "", name)
    name = tolower(substr(name, 1, 1)) substr(name, 2)
    printf ".\\\" Generated by scripts/gen-man.sh from trainprof's --help texts: edit those.\n"
    printf ".TH TRAINPROF 1 \"\" \"trainprof %s\" \"User Commands\"\n", version
    # ragged right, no hyphenation: option values and kernel-name globs stay whole
    printf ".ad l\n.nh\n"
    printf ".SH NAME\ntrainprof \\- %s\n", esc(name)
    printf ".SH SYNOPSIS\n%s", synopsis
    printf ".SH DESCRIPTION\n%s", description
    printf ".SH COMMANDS\n"
    printf "%s", commands
    printf ".SH EXIT STATUS\n%s", exit_status(exit_codes)
    if (environment != "") printf ".SH ENVIRONMENT\n%s", environment
    printf ".SH SEE ALSO\n"
    printf "README.md and docs/*.md (METRICS.md defines every figure; RECORDING.md describes the\n"
    printf "recording library), installed in share/doc/trainprof under the installation prefix;\n"
    printf "the libraries: \\fBpkg\\-config trainprof\\fR and \\fBpkg\\-config trainprof_record\\fR.\n"
}
