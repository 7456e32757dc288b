#!/usr/bin/env python3
"""Writes docs/alerts.md from the Prometheus rule file deploy/prometheus/gpupool-rules.yaml.

    scripts/alerts_doc.py [--rules FILE] [--promtool PATH] [--out FILE | --check FILE]

Without --out or --check the document goes to standard output. --check FILE compares what would
be written with FILE and exits 1, showing the difference, when they differ (the test that keeps
docs/alerts.md current). --promtool PATH first runs `PATH check rules FILE`, so that a file
Prometheus would refuse never gets documented.

Python's standard library has no YAML parser, so the rule file keeps to a subset of YAML that
read_yaml() below reads completely and refuses anything beyond with the line number: block
mappings and block sequences by indentation, plain, single- and double-quoted scalars, `|`
literal blocks (with `-` or `+` chomping), comments. Flow collections ([a, b], {a: b}), anchors,
aliases, tags, folded blocks and plain scalars over several lines are refused. Every scalar is
read as a string. Since promtool has read the same file as full YAML (with --promtool), a file
this reader accepts but misreads would show up as a difference in the generated document.

The script also checks the conventions the document relies on, and exits 2 naming the rule
that breaks one: every rule is an alert with expr, a severity of critical, warning or info, and
annotations summary, description, runbook and runbook_url; runbook_url is
docs/alerts.md#NAME-IN-LOWER-CASE (the section's anchor); the runbook has the parts "Meaning:",
"Causes:" (a list of "- " items) and "Actions:" (a numbered list), in that order; alert names
are unique.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "deploy", "prometheus", "gpupool-rules.yaml")
SEVERITIES = ("critical", "warning", "info")


class YamlError(Exception):
    pass


# ---- the YAML subset ----

def _strip_comment(text):
    """text without a trailing comment (" #..." outside quotes)."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'" and (i == 0 or text[i - 1] in " :-"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0",
            "b": "\b", "f": "\f", " ": " "}


def _scalar(text, lineno):
    """A one-line scalar: plain, 'single' or "double" quoted."""
    if text.startswith('"'):
        out, i = [], 1
        while i < len(text):
            c = text[i]
            if c == '"':
                if text[i + 1:].strip():
                    raise YamlError("line %d: text after a quoted scalar" % lineno)
                return "".join(out)
            if c == "\\":
                e = text[i + 1:i + 2]
                if e == "u" and re.match(r"[0-9a-fA-F]{4}$", text[i + 2:i + 6]):
                    out.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                if e not in _ESCAPES:
                    raise YamlError("line %d: unsupported escape \\%s" % (lineno, e))
                out.append(_ESCAPES[e])
                i += 2
                continue
            out.append(c)
            i += 1
        raise YamlError("line %d: unterminated double-quoted scalar (multi-line scalars are "
                        "not read)" % lineno)
    if text.startswith("'"):
        m = re.match(r"'((?:[^']|'')*)'\s*$", text)
        if not m:
            raise YamlError("line %d: bad single-quoted scalar" % lineno)
        return m.group(1).replace("''", "'")
    if text[:1] in "[{&*!%@`>" or text.startswith("? "):
        raise YamlError("line %d: %r is outside the YAML subset this script reads" %
                        (lineno, text[:20]))
    return text


class _Lines:
    def __init__(self, text):
        self.raw = text.split("\n")
        self.i = 0

    def peek(self):
        """(lineno, indent, content) of the next line with content, or None; skips blank and
        comment-only lines."""
        while self.i < len(self.raw):
            line = self.raw[self.i]
            if "\t" in line[:len(line) - len(line.lstrip())]:
                raise YamlError("line %d: tab in indentation" % (self.i + 1))
            content = line.strip()
            if content and not content.startswith("#"):
                return self.i + 1, len(line) - len(line.lstrip(" ")), line.strip()
            self.i += 1
        return None


def _block(lines, parent_indent, header, lineno):
    """A `|` literal block after a key at parent_indent."""
    chomp = header[1:]
    if chomp not in ("", "-", "+"):
        raise YamlError("line %d: block header %r is not read (only |, |- and |+)" %
                        (lineno, header))
    body, indent = [], None
    while lines.i < len(lines.raw):
        line = lines.raw[lines.i]
        if line.strip() == "":
            body.append("")
            lines.i += 1
            continue
        n = len(line) - len(line.lstrip(" "))
        if indent is None:
            if n <= parent_indent:
                break
            indent = n
        if n < indent:
            break
        body.append(line[indent:])
        lines.i += 1
    while body and body[-1] == "" and chomp != "+":
        body.pop()
    text = "\n".join(body)
    return text + ("\n" if chomp != "-" and text else "")


def _node(lines, indent):
    first = lines.peek()
    if first is None or first[1] < indent:
        raise YamlError("line %d: a value was expected" % (first[0] if first else len(lines.raw)))
    if first[2] == "-" or first[2].startswith("- "):
        return _sequence(lines, first[1])
    return _mapping(lines, first[1])


def _sequence(lines, indent):
    out = []
    while True:
        nxt = lines.peek()
        if nxt is None or nxt[1] < indent:
            return out
        lineno, n, content = nxt
        if n > indent or not (content == "-" or content.startswith("- ")):
            raise YamlError("line %d: a sequence item at indent %d was expected" %
                            (lineno, indent))
        rest = content[1:].lstrip(" ")
        if not rest:
            lines.i += 1
            out.append(_node(lines, indent + 1))
            continue
        # "- key: value ...": a mapping whose first key sits after the dash
        item_indent = indent + (len(content) - len(rest))
        if re.match(r"[^\s\"'][^:]*:(\s|$)", rest):
            line = lines.raw[lines.i]
            lines.raw[lines.i] = " " * item_indent + line.lstrip(" ")[len(content) - len(rest):]
            out.append(_mapping(lines, item_indent))
        else:
            lines.i += 1
            out.append(_scalar(_strip_comment(rest), lineno))


def _mapping(lines, indent):
    out = {}
    while True:
        nxt = lines.peek()
        if nxt is None or nxt[1] < indent:
            return out
        lineno, n, content = nxt
        if n > indent:
            raise YamlError("line %d: unexpected indentation" % lineno)
        m = re.match(r"([A-Za-z0-9_][A-Za-z0-9_.\-]*):(?:\s+(.*))?$", content)
        if not m:
            raise YamlError("line %d: a `key: value` line was expected" % lineno)
        key, value = m.group(1), _strip_comment(m.group(2) or "")
        if key in out:
            raise YamlError("line %d: duplicate key %s" % (lineno, key))
        lines.i += 1
        if value.startswith("|"):
            out[key] = _block(lines, indent, value, lineno)
        elif value:
            out[key] = _scalar(value, lineno)
        else:
            nxt = lines.peek()
            seq_here = nxt and nxt[1] == indent and (nxt[2] == "-" or nxt[2].startswith("- "))
            if nxt is None or (nxt[1] <= indent and not seq_here):
                out[key] = None
            else:
                out[key] = _node(lines, indent)


def read_yaml(text):
    lines = _Lines(text)
    if lines.peek() is None:
        return None
    doc = _node(lines, 0)
    rest = lines.peek()
    if rest is not None:
        raise YamlError("line %d: unexpected content" % rest[0])
    return doc


# ---- the rules and their runbooks ----

class RuleError(Exception):
    pass


def parse_runbook(name, text):
    """{"meaning": str, "causes": [str], "actions": [str]} from a runbook's text."""
    parts, cur = {"meaning": [], "causes": [], "actions": []}, None
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        head = re.match(r"(Meaning|Causes|Actions):\s*(.*)$", s)
        if head:
            key = head.group(1).lower()
            order = ["meaning", "causes", "actions"]
            if cur is not None and order.index(key) <= order.index(cur) or \
                    cur is None and key != "meaning":
                raise RuleError("%s: runbook parts must be Meaning, Causes, Actions in order" %
                                name)
            cur = key
            if head.group(2):
                parts[cur].append(head.group(2))
            continue
        if cur is None:
            raise RuleError("%s: runbook must start with \"Meaning:\"" % name)
        if cur == "meaning":
            parts[cur].append(s)
        elif cur == "causes" and s.startswith("- "):
            parts[cur].append(s[2:])
        elif cur == "actions" and re.match(r"\d+\.\s", s):
            parts[cur].append(re.sub(r"^\d+\.\s+", "", s))
        elif parts[cur]:
            parts[cur][-1] += " " + s  # a wrapped item
        else:
            raise RuleError("%s: %s must be a list" % (name, cur))
    for key in ("meaning", "causes", "actions"):
        if not parts[key]:
            raise RuleError("%s: runbook has no %s" % (name, key))
    parts["meaning"] = " ".join(parts["meaning"])
    return parts


def load_rules(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise RuleError("the file must be a mapping with a list `groups`")
    alerts, seen = [], set()
    for g in doc["groups"]:
        if not isinstance(g, dict) or not isinstance(g.get("rules"), list):
            raise RuleError("every group needs a name and a list of rules")
        for r in g["rules"]:
            name = r.get("alert") if isinstance(r, dict) else None
            if not name:
                raise RuleError("group %s: every rule must be an alert" % g.get("name"))
            if name in seen:
                raise RuleError("%s: defined twice" % name)
            seen.add(name)
            labels = r.get("labels") or {}
            ann = r.get("annotations") or {}
            if not r.get("expr"):
                raise RuleError("%s: no expr" % name)
            if labels.get("severity") not in SEVERITIES:
                raise RuleError("%s: severity must be one of %s" % (name, ", ".join(SEVERITIES)))
            for key in ("summary", "description", "runbook", "runbook_url"):
                if not ann.get(key):
                    raise RuleError("%s: no annotation %s" % (name, key))
            want = "docs/alerts.md#" + name.lower()
            if ann["runbook_url"] != want:
                raise RuleError("%s: runbook_url must be %s" % (name, want))
            alerts.append({"group": g.get("name", ""), "name": name, "expr": r["expr"],
                           "for": r.get("for") or "", "labels": labels, "ann": ann,
                           "runbook": parse_runbook(name, ann["runbook"])})
    return alerts


# ---- Markdown ----

def md_text(s):
    """Runbook prose for Markdown: `code` spans kept, <, > and | escaped outside them."""
    out = []
    for i, piece in enumerate(re.split(r"(`[^`]*`)", s)):
        if i % 2:
            out.append(piece)
        else:
            out.append(piece.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|"))
    return "".join(out)


def capital(s):
    return s[:1].upper() + s[1:]


def first_sentence(s):
    """Up to the first full stop that ends a sentence (". " before a capital, or the end)."""
    m = re.match(r"(.+?\.)(\s+[A-Z(]|$)", s)
    return capital(m.group(1) if m else s)


def render(alerts, rules_rel):
    out = []
    w = out.append
    w("# Alerts\n")
    w("<!-- Generated by scripts/alerts_doc.py from %s; edit the rules and run `make docs`. -->\n"
      % rules_rel)
    w("The Prometheus alerting rules of a gpupool pool, with what each alert means, its likely "
      "causes and what to do. Load `%s` into Prometheus and import "
      "`deploy/grafana/gpupool-dashboard.json` into Grafana (docs/operations.md, \"Alerts\"). "
      "Each alert's `runbook_url` annotation points at its section here "
      "(`docs/alerts.md#NAME`, the name in lower case); `runbook` carries the same text, so a "
      "notification shows it even where this page cannot be reached.\n" % rules_rel)
    w("Severities: **critical**, act now (a node or the controller is down, a GPU failed); "
      "**warning**, act today (capacity or performance is lost); **info**, worth knowing. "
      "In the commands below, `<Hostname>`, `<gpu>`, `<tenant>` and the like are the alert's "
      "labels.\n")
    w("gpupoold also sends its own events (GpuDrained, NodeLost, JobRestartedAfterFault, "
      "TenantQuotaExhausted, JobIdleStopped) straight to Alertmanager when `alerts.alertmanager` "
      "is set; docs/operations.md describes them.\n")
    w("| Alert | Severity | Component | Fires after | Meaning |")
    w("|-------|----------|-----------|-------------|---------|")
    for a in alerts:
        w("| [%s](#%s) | %s | %s | %s | %s |" % (
            a["name"], a["name"].lower(), a["labels"]["severity"],
            a["labels"].get("component", ""), a["for"] or "at once",
            md_text(first_sentence(a["runbook"]["meaning"]))))
    w("")
    for a in alerts:
        rb = a["runbook"]
        w('## %s\n' % a["name"])
        w('<a id="%s"></a>\n' % a["name"].lower())
        extra = ", ".join("%s=%s" % (k, v) for k, v in sorted(a["labels"].items())
                          if k not in ("severity", "component"))
        w("Severity **%s**, component %s, group `%s`, fires %s%s.\n" % (
            a["labels"]["severity"], a["labels"].get("component", "-"), a["group"],
            "after the condition has held for %s" % a["for"] if a["for"]
            else "as soon as the condition holds",
            "; labels " + extra if extra else ""))
        w("```promql\n%s\n```\n" % a["expr"].strip())
        w("Summary and description (Prometheus templates):\n")
        w("```text\n%s\n%s\n```\n" % (a["ann"]["summary"], a["ann"]["description"]))
        w("**Meaning.** %s\n" % md_text(capital(rb["meaning"])))
        w("**Likely causes.**\n")
        for c in rb["causes"]:
            w("- %s" % md_text(capital(c)))
        w("")
        w("**What to do.**\n")
        for i, act in enumerate(rb["actions"], 1):
            w("%d. %s" % (i, md_text(act)))
        w("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", default=RULES)
    ap.add_argument("--promtool", help="run `PROMTOOL check rules` on the file first")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--out", help="write the document to this file")
    g.add_argument("--check", help="exit 1 when this file differs from the document")
    args = ap.parse_args()

    if args.promtool:
        p = subprocess.run([args.promtool, "check", "rules", args.rules], capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            sys.stderr.write("alerts_doc: promtool refuses %s\n" % args.rules)
            return 2
    with open(args.rules, encoding="utf-8") as f:
        text = f.read()
    try:
        alerts = load_rules(read_yaml(text))
    except (YamlError, RuleError) as e:
        sys.stderr.write("alerts_doc: %s: %s\n" % (args.rules, e))
        return 2
    rel = os.path.relpath(os.path.abspath(args.rules), ROOT)
    doc = render(alerts, rel)
    if args.check:
        try:
            with open(args.check, encoding="utf-8") as f:
                have = f.read()
        except OSError as e:
            have = ""
            sys.stderr.write("alerts_doc: %s\n" % e)
        if have != doc:
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), doc.splitlines(True), args.check, "generated"))
            sys.stderr.write("alerts_doc: %s is not current: run `make docs` (or "
                             "scripts/alerts_doc.py --out %s)\n" % (args.check, args.check))
            return 1
        return 0
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(doc)
    else:
        sys.stdout.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
