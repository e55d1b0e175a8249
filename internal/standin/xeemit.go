package standin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// xeField is one <data> element of an event.
type xeField struct {
	name    string
	typ     string // XE type name, for the ring_buffer form's <type>
	pkg     string
	value   string
	text    string // map text; non-empty marks a map field
	cdata   bool   // string value, written as CDATA
	xmlBody bool   // value is an XML element (showplan_xml)
	num     int64  // numeric value for predicates
	isNum   bool
}

func fUint(name, typ string, v int64) xeField {
	return xeField{name: name, typ: typ, pkg: "package0", value: strconv.FormatInt(v, 10), num: v, isNum: true}
}

func fMap(name, mapName, pkg, text string) xeField {
	k := mapKey(mapName, text)
	return xeField{name: name, typ: mapName, pkg: pkg, value: strconv.Itoa(k), text: text, num: int64(k), isNum: true}
}

func fStr(name, v string) xeField {
	return xeField{name: name, typ: "unicode_string", pkg: "package0", value: v, cdata: true}
}

func fPtr(name string, v uint64) xeField {
	return xeField{name: name, typ: "ptr", pkg: "package0", value: fmt.Sprintf("0x%016x", v), num: int64(v), isNum: true}
}

func fBool(name string, v bool) xeField {
	s := "false"
	if v {
		s = "true"
	}
	return xeField{name: name, typ: "boolean", pkg: "package0", value: s, num: boolInt(v), isNum: true}
}

// xeEventData is an event about to be written.
type xeEventData struct {
	name   string
	pkg    string
	ts     time.Time
	fields []xeField
	thread int            // worker thread, for sqlos actions
	stack  *renderedStack // call stack, rendered when a session asks for it (callstacks.go)
}

// eventCtx is the context actions and predicate sources are read from.
type eventCtx struct {
	spid       int
	dbID       int
	dbName     string
	sqlText    string
	planHandle string
	txnID      int64
	queryHash  uint64
	planHash   uint64
	appName    string
	hostName   string
	clientPID  int
	user       string
	serverName string
}

func (c *eventCtx) actionValue(name string, ev *xeEventData, seq int64) (string, bool) {
	switch name {
	case "session_id":
		return strconv.Itoa(c.spid), false
	case "request_id":
		return "0", false
	case "database_id":
		return strconv.Itoa(c.dbID), false
	case "database_name":
		return c.dbName, true
	case "sql_text":
		return c.sqlText, true
	case "plan_handle":
		if c.planHandle == "" {
			return strings.Repeat("0", 88), false
		}
		return c.planHandle, false
	case "transaction_id":
		return strconv.FormatInt(c.txnID, 10), false
	case "query_hash", "query_hash_signed":
		if name == "query_hash_signed" {
			return strconv.FormatInt(int64(c.queryHash), 10), false
		}
		return strconv.FormatUint(c.queryHash, 10), false
	case "query_plan_hash", "query_plan_hash_signed":
		if name == "query_plan_hash_signed" {
			return strconv.FormatInt(int64(c.planHash), 10), false
		}
		return strconv.FormatUint(c.planHash, 10), false
	case "client_app_name":
		return c.appName, true
	case "client_hostname":
		return c.hostName, true
	case "client_pid":
		return strconv.Itoa(c.clientPID), false
	case "username", "server_principal_name", "nt_username", "session_nt_username":
		return c.user, true
	case "server_instance_name":
		return c.serverName, true
	case "is_system":
		return "false", false
	case "context_info":
		return "", false
	case "event_sequence":
		return strconv.FormatInt(seq, 10), false
	case "collect_system_time":
		return ev.ts.UTC().Format("2006-01-02T15:04:05.000Z"), false
	case "task_address":
		return fmt.Sprintf("0x%016x", 0x000001E4A8C0C4E8+uint64(ev.thread)*0x1c8), false
	case "worker_address":
		return fmt.Sprintf("0x%016x", 0x000001E4B2E70160+uint64(ev.thread)*0x2060), false
	case "system_thread_id":
		return strconv.Itoa(4120 + ev.thread*8), false
	case "scheduler_id", "cpu_id":
		return strconv.Itoa(ev.thread % 4), false
	case "task_time":
		return "0", false
	case "callstack":
		return callstackValue(ev, false), false
	case "callstack_rva":
		return callstackValue(ev, true), true
	}
	return "", false
}

// predicate evaluation

func (c *eventCtx) sourceValue(src sqlfront.XEName, ev *xeEventData) (any, bool) {
	if src.Package == "" {
		for _, f := range ev.fields {
			if f.name == src.Name {
				if f.isNum {
					return f.num, true
				}
				return f.value, true
			}
		}
		return nil, false
	}
	v, _ := c.actionValue(src.Name, ev, 0)
	switch src.Name {
	case "session_id", "database_id", "request_id", "transaction_id", "client_pid", "scheduler_id", "query_hash", "plan_handle":
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n, true
		}
	}
	return v, true
}

func evalXEPred(p sqlfront.XEPred, c *eventCtx, ev *xeEventData) bool {
	switch x := p.(type) {
	case nil:
		return true
	case *sqlfront.XEPredAnd:
		return evalXEPred(x.L, c, ev) && evalXEPred(x.R, c, ev)
	case *sqlfront.XEPredOr:
		return evalXEPred(x.L, c, ev) || evalXEPred(x.R, c, ev)
	case *sqlfront.XEPredNot:
		return !evalXEPred(x.P, c, ev)
	case *sqlfront.XEPredLeaf:
		v, ok := c.sourceValue(x.Source, ev)
		if !ok {
			return false
		}
		switch x.Op {
		case "LIKE", "NOT LIKE":
			s, _ := x.Value.(string)
			m := likeMatch(valueString(v), s)
			return m == (x.Op == "LIKE")
		}
		// a map field compared with a string compares the map text
		if x.Source.Package == "" {
			if sv, isStr := x.Value.(string); isStr {
				for _, f := range ev.fields {
					if f.name == x.Source.Name && f.text != "" {
						v = f.text
						return cmpOp(x.Op, strings.Compare(strings.ToUpper(f.text), strings.ToUpper(sv)))
					}
				}
			}
		}
		c2, err := compareValues(v, x.Value)
		if err != nil {
			return false
		}
		return cmpOp(x.Op, c2)
	}
	return false
}

func cmpOp(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// renderEvent writes one event as fn_xe_file_target_read_file returns it
// (withTypes false) or as ring_buffer target_data holds it (withTypes true).
func renderEvent(b *strings.Builder, ev *xeEventData, actions []sqlfront.XEName, c *eventCtx, seq int64, withTypes bool, stamps *stampCache) {
	b.WriteString(`<event name="`)
	b.WriteString(ev.name)
	b.WriteString(`" package="`)
	b.WriteString(ev.pkg)
	b.WriteString(`" timestamp="`)
	b.WriteString(stamps.xeTimestamp(ev.ts))
	b.WriteString(`">`)
	for i := range ev.fields {
		f := &ev.fields[i]
		b.WriteString(`<data name="`)
		b.WriteString(f.name)
		b.WriteString(`">`)
		if withTypes {
			b.WriteString(`<type name="`)
			b.WriteString(f.typ)
			b.WriteString(`" package="`)
			b.WriteString(f.pkg)
			b.WriteString(`"/>`)
		}
		b.WriteString("<value>")
		switch {
		case f.xmlBody:
			b.WriteString(f.value)
		case f.cdata:
			writeCDATA(b, f.value)
		default:
			b.WriteString(f.value)
		}
		b.WriteString("</value>")
		if f.text != "" {
			b.WriteString("<text>")
			writeCDATA(b, f.text)
			b.WriteString("</text>")
		}
		b.WriteString("</data>")
	}
	for _, a := range actions {
		v, isText := c.actionValue(a.Name, ev, seq)
		b.WriteString(`<action name="`)
		b.WriteString(a.Name)
		b.WriteString(`" package="`)
		b.WriteString(a.Package)
		b.WriteString(`">`)
		if withTypes {
			b.WriteString(`<type name="`)
			b.WriteString(actionType(a.Name))
			b.WriteString(`" package="package0"/>`)
		}
		b.WriteString("<value>")
		if isText {
			writeCDATA(b, v)
		} else {
			b.WriteString(v)
		}
		b.WriteString("</value></action>")
	}
	b.WriteString("</event>")
}

// stampCache remembers the last rendered timestamp: consecutive events
// mostly share a millisecond. Each writer (a Server, a GenerateTrace call)
// owns one, so no state is shared between goroutines.
type stampCache struct {
	ms   int64
	text string
}

// xeTimestamp renders an event timestamp as XE's XML does: UTC with
// millisecond precision.
func (c *stampCache) xeTimestamp(t time.Time) string {
	ms := t.UnixMilli()
	if c != nil && c.text != "" && c.ms == ms {
		return c.text
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	if c != nil {
		c.ms, c.text = ms, s
	}
	return s
}

func actionType(name string) string {
	switch name {
	case "session_id", "request_id", "database_id", "scheduler_id", "cpu_id":
		return "uint16"
	case "sql_text", "database_name", "client_app_name", "client_hostname", "username", "server_principal_name", "server_instance_name", "nt_username", "session_nt_username", "callstack_rva":
		return "unicode_string"
	case "plan_handle", "context_info":
		return "binary_data"
	case "event_sequence", "query_hash", "query_plan_hash", "system_thread_id", "task_time":
		return "uint64"
	case "transaction_id", "query_hash_signed", "query_plan_hash_signed":
		return "int64"
	case "task_address", "worker_address":
		return "ptr"
	case "callstack":
		return "callstack"
	case "collect_system_time":
		return "filetime"
	case "is_system":
		return "boolean"
	}
	return "uint32"
}

func writeCDATA(b *strings.Builder, s string) {
	b.WriteString("<![CDATA[")
	b.WriteString(strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>"))
	b.WriteString("]]>")
}

// likeMatch implements LIKE with %, _ and [set] wildcards, case-insensitive.
func likeMatch(s, pattern string) bool {
	return likeRunes([]rune(strings.ToUpper(s)), []rune(strings.ToUpper(pattern)))
}

func likeRunes(s, p []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeRunes(s[i:], p) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		case '[':
			end := -1
			for j := 1; j < len(p); j++ {
				if p[j] == ']' {
					end = j
					break
				}
			}
			if end < 0 || len(s) == 0 {
				return false
			}
			set := p[1:end]
			neg := len(set) > 0 && set[0] == '^'
			if neg {
				set = set[1:]
			}
			match := false
			for j := 0; j < len(set); j++ {
				if j+2 < len(set) && set[j+1] == '-' {
					if s[0] >= set[j] && s[0] <= set[j+2] {
						match = true
					}
					j += 2
				} else if set[j] == s[0] {
					match = true
				}
			}
			if match == neg {
				return false
			}
			s, p = s[1:], p[end+1:]
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}
