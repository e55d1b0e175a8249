package findings

import (
	"fmt"
	"strings"
)

// textWidth is where Text wraps its paragraphs.
const textWidth = 100

// Text renders the report for a terminal: one block per finding (severity,
// title, operators, confidence, evidence, detail, hint, reference), then the
// notes. A report without findings says so.
func (r *Report) Text() string {
	var b strings.Builder
	if len(r.Findings) == 0 {
		b.WriteString("Findings: none.\n")
	} else {
		fmt.Fprintf(&b, "Findings (%d):\n", len(r.Findings))
	}
	for i := range r.Findings {
		writeFinding(&b, &r.Findings[i])
	}
	for _, n := range r.Notes {
		writeWrapped(&b, "note: ", "      ", n)
	}
	return b.String()
}

func writeFinding(b *strings.Builder, f *Finding) {
	const indent = "            "
	writeWrapped(b, fmt.Sprintf("  %-9s ", strings.ToUpper(string(f.Severity))), indent, f.Title)
	if len(f.Operators) > 0 {
		var ops []string
		for _, o := range f.Operators {
			ops = append(ops, fmt.Sprintf("%s [node %d]", o.String(), o.NodeID))
		}
		writeWrapped(b, indent+"operators: ", indent+"           ", strings.Join(ops, ", "))
	}
	meta := []string{"confidence " + string(f.Confidence), "rule " + f.Rule}
	if f.EvidenceTotal > 0 {
		ev := fmt.Sprintf("evidence %s from %s", plural(int64(f.EvidenceTotal), "event", "events"), Duration(f.Start))
		if f.End > f.Start {
			ev += " to " + Duration(f.End)
		}
		meta = append(meta, ev)
	}
	b.WriteString(indent + strings.Join(meta, " · ") + "\n")
	for _, r := range f.ConfidenceReasons {
		writeWrapped(b, indent+"  less sure: ", indent+"  ", r)
	}
	if f.Detail != "" {
		writeWrapped(b, indent, indent, f.Detail)
	}
	writeWrapped(b, indent+"Hint: ", indent+"      ", f.Hint)
	writeWrapped(b, indent+"See: ", indent+"     ", f.Reference)
}

// writeWrapped writes text after first, wrapping at textWidth with rest
// before each further line.
func writeWrapped(b *strings.Builder, first, rest, text string) {
	line := first
	width := len([]rune(first))
	empty := true
	for _, w := range strings.Fields(text) {
		n := len([]rune(w))
		if !empty && width+1+n > textWidth {
			b.WriteString(line + "\n")
			line, width, empty = rest, len([]rune(rest)), true
		}
		if !empty {
			line += " "
			width++
		}
		line += w
		width += n
		empty = false
	}
	b.WriteString(line + "\n")
}
