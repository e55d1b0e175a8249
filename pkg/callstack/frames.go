package callstack

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse splits call-stack text into stacks. It accepts, in one input:
//
//   - histogram target XML (<HistogramTarget><Slot count><value>…, raw, CDATA
//     or entity-escaped, several documents with annotations between them):
//     one stack per slot;
//   - event XML (a ring_buffer <RingBufferTarget> document, event_file rows
//     from sys.fn_xe_file_target_read_file): one stack per <event>, taken
//     only from its package0.callstack / callstack_rva action (or a data
//     field of that name) — never from other fields;
//   - SQL Server 2022+ <frame …/> elements (escaped or not, attributes
//     possibly broken across lines), anywhere;
//   - SQLDump short stacks (ADDRESS Module(sqllang+0000000000667057));
//   - text lines of frames: module+offset (sqldk+0x40609, sqldk.dll+40609,
//     "sqldk +0x40609"), already symbolised frames
//     (sqldk!SOS_Task::Param::Execute+0x1f), Internals Viewer's
//     module@0xADDRESS and bare virtual addresses (0x00007FFEABD0D919,
//     resolved with opts.Bases when given), each optionally preceded by a
//     frame number, a line optionally led by one label word ("callstack").
//     Outside XML, blank lines separate stacks.
//
// A text line gives frames only when every token on it is a frame (frame
// numbers and a leading label aside): that is what keeps register dumps
// ("rax = 0x0000…"), base-address lines ("sqldk.dll 0x00000001…") and
// prose from being read as frames. Literal "\r\n" escapes (inputs pasted
// from C# strings) count as line breaks.
//
// Frames without module identity borrow it from other frames of the same
// module in the input, and bare addresses of a module get RVAs from the
// load base implied by any frame that has both address and RVA.
func Parse(input string, opts ParseOptions) ([]Stack, error) {
	if len(input) > maxInputBytes {
		return nil, fmt.Errorf("call-stack input of %d bytes exceeds the %d-byte limit", len(input), maxInputBytes)
	}
	if !utf8.ValidString(input) {
		return nil, fmt.Errorf("call-stack input is not valid UTF-8 (decode UTF-16 with DecodeText first)")
	}
	text := input
	if strings.Contains(text, `\r\n`) {
		text = strings.ReplaceAll(text, `\r\n`, "\n")
	}
	if strings.Contains(text, "&lt;") || strings.Contains(text, "&gt;") || strings.Contains(text, "&quot;") {
		text = html.UnescapeString(text)
	}
	var stacks []Stack
	switch {
	case histogramStart.MatchString(text):
		stacks = parseHistograms(text)
	case eventStart.MatchString(text):
		stacks = parseEvents(text)
	case strings.Contains(text, "Short Stack Dump"):
		stacks = parseShortStackDump(text[strings.Index(text, "Short Stack Dump"):])
	default:
		// One backing array for all stacks (a line holds a frame or so):
		// 100,000-frame inputs would otherwise grow every stack's slice.
		all := make([]Frame, 0, strings.Count(text, "\n")+1)
		for _, block := range splitBlocks(text) {
			start := len(all)
			if all = scanFrames(block, all); len(all) > start {
				stacks = append(stacks, Stack{Frames: all[start:len(all):len(all)], Count: 1})
			}
		}
	}
	completeFrames(stacks, opts)
	return stacks, nil
}

var (
	histogramStart = regexp.MustCompile(`<HistogramTarget[\s>]`)
	slotPattern    = regexp.MustCompile(`(?s)<Slot\s+count="(\d+)"[^>]*>\s*<value>(.*?)(?:</value>|$)`)
	eventStart     = regexp.MustCompile(`<event\s[^>]*\bname\s*=`)
	// stackField finds the call-stack action (or data field) of an event and
	// its value: package0.callstack and package0.callstack_rva.
	stackField = regexp.MustCompile(`(?s)<(action|data)\s[^>]*?\bname\s*=\s*["'](?:package0\.)?(callstack(?:_rva)?)["'][^>]*>(.*?)</(?:action|data)>`)
	valueBody  = regexp.MustCompile(`(?s)<value>(.*?)</value>`)
	attrName   = regexp.MustCompile(`\b(name|timestamp)\s*=\s*["']([^"']*)["']`)
)

func parseHistograms(text string) []Stack {
	var stacks []Stack
	starts := histogramStart.FindAllStringIndex(text, -1)
	prevEnd := 0
	for i, st := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		label := strings.TrimSpace(text[prevEnd:st[0]])
		doc := text[st[0]:end]
		if j := strings.Index(doc, "</HistogramTarget>"); j >= 0 {
			prevEnd = st[0] + j + len("</HistogramTarget>")
			doc = doc[:j]
		} else {
			prevEnd = end
		}
		for _, m := range slotPattern.FindAllStringSubmatch(doc, -1) {
			count, _ := strconv.ParseInt(m[1], 10, 64)
			value := m[2]
			if k := strings.Index(value, "<Slot"); k >= 0 { // unterminated value
				value = value[:k]
			}
			frames := scanFrames(stripCDATA(value), nil)
			if len(frames) == 0 {
				continue
			}
			stacks = append(stacks, Stack{Frames: frames, Count: count, Label: label})
		}
	}
	return stacks
}

// parseEvents reads event XML: each <event> gives at most one stack, from
// its callstack (or callstack_rva) value. The label is the event's name and
// timestamp.
func parseEvents(text string) []Stack {
	var stacks []Stack
	starts := eventStart.FindAllStringIndex(text, -1)
	for i, st := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		ev := text[st[0]:end]
		if j := strings.Index(ev, "</event>"); j >= 0 {
			ev = ev[:j]
		}
		var frames []Frame
		for _, m := range stackField.FindAllStringSubmatch(ev, -1) {
			body := m[3]
			if v := valueBody.FindStringSubmatch(body); v != nil {
				body = v[1]
			} else if strings.Contains(body, "<value>") {
				continue // no closing tag: a truncated row
			}
			frames = scanFrames(stripCDATA(body), frames)
		}
		if len(frames) == 0 {
			continue
		}
		open := ev[:strings.IndexByte(ev, '>')+1]
		var label []string
		for _, a := range attrName.FindAllStringSubmatch(open, -1) {
			label = append(label, a[2])
		}
		stacks = append(stacks, Stack{Frames: frames, Count: 1, Label: strings.Join(label, " ")})
	}
	return stacks
}

func stripCDATA(s string) string {
	if !strings.Contains(s, "<![CDATA[") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "<![CDATA[", ""), "]]>", "")
}

// parseShortStackDump reads the frames of a SQLDump "Short Stack Dump"
// section: one "ADDRESS Module(name+offset)" line each, up to the first
// line that has none.
func parseShortStackDump(text string) []Stack {
	lines := strings.Split(text, "\n")[1:]
	var frames []Frame
	for _, l := range lines {
		n := len(frames)
		frames = scanLine(l, frames)
		if len(frames) == n {
			if strings.TrimSpace(l) == "" && n == 0 {
				continue
			}
			break
		}
	}
	if len(frames) == 0 {
		return nil
	}
	return []Stack{{Frames: frames, Count: 1}}
}

// splitBlocks splits text at blank lines (lines of nothing but spaces, tabs
// and carriage returns).
func splitBlocks(text string) []string {
	var blocks []string
	start := 0
	for i := 0; i < len(text); {
		nl := strings.IndexByte(text[i:], '\n')
		if nl < 0 {
			break
		}
		lineStart := i + nl + 1
		j := lineStart
		for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
			j++
		}
		if j < len(text) && text[j] == '\n' { // the line after this newline is blank
			blocks = append(blocks, text[start:i+nl])
			start, i = j+1, j+1
			continue
		}
		i = lineStart
	}
	return append(blocks, text[start:])
}

// scanFrames appends the frames of a frame-bearing text to out, in document
// order: <frame …> elements wherever they are, and frame lines around them.
// Other XML tags are blanked first so that a misnamed wrapper element does
// not hide the addresses inside it.
func scanFrames(text string, out []Frame) []Frame {
	for text != "" {
		i := frameElementStart(text)
		if i < 0 {
			return scanLines(text, out)
		}
		out = scanLines(text[:i], out)
		j := strings.IndexByte(text[i:], '>')
		if j < 0 {
			return out // an unterminated element ends the frames
		}
		if f, ok := parseFrameElement(text[i : i+j+1]); ok {
			out = append(out, f)
		}
		text = text[i+j+1:]
	}
	return out
}

// frameElementStart returns the index of the next "<frame" start tag.
func frameElementStart(text string) int {
	for off := 0; ; {
		i := strings.Index(text[off:], "<frame")
		if i < 0 {
			return -1
		}
		k := off + i + len("<frame")
		if k == len(text) || text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n' || text[k] == '/' || text[k] == '>' {
			return off + i
		}
		off = k
	}
}

var xmlTag = regexp.MustCompile(`</?[A-Za-z_][\w:.\-]*(?:\s[^<>]*)?/?>|<!\[CDATA\[|\]\]>`)

// blankTags replaces XML tags with spaces; a '<' glued to a name is a
// template argument list (CAutoRefc<HkStorageInterface>), not a tag.
func blankTags(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range xmlTag.FindAllStringIndex(text, -1) {
		if m[0] > 0 && text[m[0]] == '<' && isNameByte(text[m[0]-1]) {
			continue
		}
		b.WriteString(text[last:m[0]])
		b.WriteByte(' ')
		last = m[1]
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func isNameByte(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '_' }

func scanLines(text string, out []Frame) []Frame {
	if strings.IndexByte(text, '<') >= 0 {
		text = blankTags(text)
	}
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		out = scanLine(line, out)
	}
	return out
}

// dumpFrame is SQLDump's "ADDRESS Module(name+offset)" frame, optionally
// followed by a parenthesised symbol hint.
var dumpFrame = regexp.MustCompile(`(?:\b([0-9A-Fa-f]{8,16})\s+)?Module\(([^()+\s]+)\+([0-9A-Fa-f]+)\)`)

// scanLine appends the frames of one text line, all or nothing: every token
// must be a frame, a frame number before a frame, or (first) a label word.
func scanLine(line string, out []Frame) []Frame {
	if strings.Contains(line, "Module(") {
		for _, m := range dumpFrame.FindAllStringSubmatch(line, -1) {
			off, ok := parseHex(m[3])
			if !ok || off > 0xFFFFFFFF {
				continue
			}
			f := Frame{ID: -1, Module: m[2], RVA: uint32(off), HasRVA: true}
			if a, ok := parseHex(m[1]); ok && m[1] != "" {
				f.Address, f.HasAddress = a, true
			}
			out = append(out, f)
		}
		return out
	}
	if t := strings.TrimSpace(line); t != "" && !hasInnerSpace(t) {
		// One token, the common case (sqldk+0x40609): no tokenizing needed.
		if f, ok := parseFrameToken(t); ok {
			return append(out, f)
		}
		return out
	}
	var buf [8]string // most frame lines hold one or two tokens (a bigger array costs its zeroing on every line)
	toks := tokenize(line, buf[:0])
	if len(toks) == 0 {
		return out
	}
	start := len(out)
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if f, ok := parseFrameToken(tok); ok {
			out = append(out, f)
			continue
		}
		if i+1 < len(toks) && isFrameNumber(tok) {
			if f, ok := parseFrameToken(toks[i+1]); ok {
				n, _ := strconv.ParseInt(tok, 16, 32)
				f.ID = int(n)
				out = append(out, f)
				i++
				continue
			}
		}
		if i == 0 && isLabel(tok) {
			continue
		}
		return out[:start] // not a frame line
	}
	return out
}

func hasInnerSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\v' || c == '\f' {
			return true
		}
	}
	return false
}

// tokenize splits a line at white space, keeping `quoted names' and <…>
// template arguments whole, and joins "+offset" to the module before it
// ("sqldk +0x40609", "sqldk + 40609").
func tokenize(line string, toks []string) []string {
	var nest nesting
	begin, lastBegin := -1, -1
	for i := 0; i <= len(line); i++ {
		c := byte(' ')
		if i < len(line) {
			c = line[i]
		}
		space := c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
		if space && nest.top() {
			if begin >= 0 {
				if n := len(toks); n > 0 && joinsOffset(toks[n-1], line[begin:i]) {
					toks[n-1] = strings.Join(strings.Fields(line[lastBegin:i]), "")
				} else {
					toks = append(toks, line[begin:i])
					lastBegin = begin
				}
				begin = -1
			}
			continue
		}
		if begin < 0 {
			begin = i
		}
		nest.step(c)
	}
	return toks
}

// nesting follows <…> template brackets and `quoted names' through a
// symbol, so that separators inside them are not taken for real ones.
type nesting struct {
	depth  int
	quoted bool
}

func (n *nesting) step(c byte) {
	switch c {
	case '`':
		n.quoted = true
	case '\'':
		n.quoted = false
	case '<':
		n.depth++
	case '>':
		if n.depth > 0 {
			n.depth--
		}
	}
}

// top reports whether the position is outside every bracket and quote.
func (n nesting) top() bool { return n.depth == 0 && !n.quoted }

// joinsOffset reports whether next continues prev as module+offset split
// by spaces: "sqldk" "+0x40609", or "sqldk+" "0x40609".
func joinsOffset(prev, next string) bool {
	if strings.Contains(prev, "!") {
		return false
	}
	switch {
	case next[0] == '+':
		return isModuleName(prev)
	case strings.HasSuffix(prev, "+"):
		return isModuleName(prev[:len(prev)-1])
	}
	return false
}

// parseFrameToken reads one frame token: module!symbol[+offset],
// module@0xADDRESS, 0xADDRESS or module+offset.
func parseFrameToken(tok string) (Frame, bool) {
	tok = trimEscapes(tok)
	f := Frame{ID: -1}
	if tok == "" {
		return f, false
	}
	if i := strings.IndexByte(tok, '!'); i > 0 {
		mod, sym := tok[:i], tok[i+1:]
		if !isModuleName(mod) {
			return f, false
		}
		if j := offsetPlus(sym); j >= 0 {
			off, ok := hexDigits(strings.TrimPrefix(strings.TrimPrefix(sym[j+1:], "0x"), "0X"))
			if !ok {
				return f, false
			}
			f.SymbolOffset, sym = off, sym[:j]
		}
		if sym == "" || strings.ContainsAny(sym, "!") {
			return f, false
		}
		f.Module, f.Symbol = mod, sym
		return f, true
	}
	if i := strings.Index(tok, "@0"); i > 0 && len(tok) > i+2 && (tok[i+2] == 'x' || tok[i+2] == 'X') {
		addr, ok := hexDigits(tok[i+3:])
		if !ok || !isModuleName(tok[:i]) {
			return f, false
		}
		f.Module, f.Address, f.HasAddress = tok[:i], addr, true
		return f, true
	}
	if len(tok) > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X') {
		addr, ok := hexDigits(tok[2:])
		f.Address, f.HasAddress = addr, ok
		return f, ok
	}
	if i := strings.LastIndexByte(tok, '+'); i > 0 {
		mod := tok[:i]
		off, ok := hexDigits(strings.TrimPrefix(strings.TrimPrefix(tok[i+1:], "0x"), "0X"))
		if !ok || off > 0xFFFFFFFF || !isModuleName(mod) {
			return f, false
		}
		f.Module, f.RVA, f.HasRVA = mod, uint32(off), true
		return f, true
	}
	return f, false
}

// trimEscapes drops literal \n, \r and \t escapes glued to the front or
// back of a token (C# string literals pasted as text).
func trimEscapes(tok string) string {
	for len(tok) >= 2 && tok[0] == '\\' && (tok[1] == 'n' || tok[1] == 'r' || tok[1] == 't') {
		tok = tok[2:]
	}
	for len(tok) >= 2 && tok[len(tok)-2] == '\\' && (tok[len(tok)-1] == 'n' || tok[len(tok)-1] == 'r' || tok[len(tok)-1] == 't') {
		tok = tok[:len(tok)-2]
	}
	return tok
}

// offsetPlus finds the '+' that introduces a symbol's displacement: the
// last one outside <…> and `…'.
func offsetPlus(sym string) int {
	var nest nesting
	at := -1
	for i := 0; i < len(sym); i++ {
		if sym[i] == '+' && nest.top() {
			at = i
		}
		nest.step(sym[i])
	}
	if at >= 0 && at+1 < len(sym) && sym[at+1] == '+' || at > 0 && sym[at-1] == '+' {
		return -1 // operator++
	}
	return at
}

// isModuleName accepts a module's short or file name: a letter or '_',
// then letters, digits, '_', '.', '-'.
func isModuleName(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isLabel accepts one word of letters, optionally ending in ':', as a line's
// leading label ("callstack", "Histogram", "Frames:").
func isLabel(s string) bool {
	s = strings.TrimSuffix(s, ":")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// isFrameNumber accepts 1–4 hex digits (WinDbg and SQL Server print "00",
// "0a").
func isFrameNumber(s string) bool {
	if len(s) == 0 || len(s) > 4 {
		return false
	}
	_, ok := hexDigits(s)
	return ok
}

// hexDigits parses 1–16 hex digits and nothing else.
func hexDigits(s string) (uint64, bool) {
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
