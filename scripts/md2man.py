#!/usr/bin/env python3
"""md2man.py - turn hop's man pages (pandoc-style markdown) into troff.

Handles what our pages use: a YAML header (title, section, header), '# NAME'
section headings, paragraphs, definition lists (a term line, then ':   text'
with continuation lines indented by four spaces), code blocks indented by
four spaces, **bold**, *italic* and `code`. Enough of pandoc for man(1)
without needing pandoc.

usage: md2man.py IN.md OUT
"""
import re
import sys


def inline(s):
    s = s.replace("\\-", "-").replace("\\", "\\e").replace("-", "\\-")
    s = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", s)
    s = re.sub(r"\*(.+?)\*", r"\\fI\1\\fR", s)
    s = re.sub(r"`(.+?)`", r"\\fB\1\\fR", s)
    if s[:1] in (".", "'"):
        s = "\\&" + s
    return s


def convert(lines):
    meta = {}
    i = 0
    if lines and lines[0].strip() == "---":
        i = 1
        while i < len(lines) and lines[i].strip() != "---":
            if ":" in lines[i]:
                k, v = lines[i].split(":", 1)
                meta[k.strip()] = v.strip()
            i += 1
        i += 1
    out = ['.TH "%s" "%s" "" "" "%s"' % (meta.get("title", "HOP"),
                                          meta.get("section", "1"),
                                          meta.get("header", "hop manual"))]
    in_def = False
    prev_blank = True
    while i < len(lines):
        ln = lines[i].rstrip("\n")
        nxt = lines[i + 1].rstrip("\n") if i + 1 < len(lines) else ""
        if ln.startswith("# "):
            out.append(".SH " + ln[2:].strip())
            in_def = False
        elif ln.startswith("## "):
            out.append(".SS " + ln[3:].strip())
            in_def = False
        elif ln.strip() == "":
            prev_blank = True
            i += 1
            continue
        elif nxt.startswith(":   ") and not ln.startswith(" "):
            out.append(".TP")
            out.append(inline(ln))
            in_def = True
        elif ln.startswith(":   "):
            out.append(inline(ln[4:]))
        elif ln.startswith("    ") and in_def and not prev_blank:
            out.append(inline(ln[4:]))
        elif ln.startswith("    "):
            out.append(".IP\n.nf")
            while i < len(lines) and (lines[i].startswith("    ") or lines[i].strip() == ""):
                if lines[i].strip() == "" and not (i + 1 < len(lines) and lines[i + 1].startswith("    ")):
                    break
                out.append(inline(lines[i].rstrip("\n")[4:]))
                i += 1
            out.append(".fi")
            in_def = False
            prev_blank = False
            continue
        else:
            if prev_blank:
                out.append(".PP")
            out.append(inline(ln))
            in_def = False
        prev_blank = False
        i += 1
    return "\n".join(out) + "\n"


def main():
    with open(sys.argv[1]) as f:
        text = convert(f.readlines())
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
