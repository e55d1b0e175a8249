package xevents

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Field is one <data> element of an event.
type Field struct {
	Name    string
	Typ     string // XE type name, for the ring_buffer form's <type>
	Pkg     string
	Value   string
	Text    string // map text; non-empty marks a map field
	cdata   bool   // string value, written as CDATA
	XMLBody bool   // value is an XML element (showplan_xml)
	num     int64  // numeric value for predicates
	isNum   bool
}

func FUint(name, typ string, v int64) Field {
	return Field{Name: name, Typ: typ, Pkg: "package0", Value: strconv.FormatInt(v, 10), num: v, isNum: true}
}

func FMap(name, mapName, pkg, text string) Field {
	k := MapKey(mapName, text)
	return Field{Name: name, Typ: mapName, Pkg: pkg, Value: strconv.Itoa(k), Text: text, num: int64(k), isNum: true}
}

func FStr(name, v string) Field {
	return Field{Name: name, Typ: "unicode_string", Pkg: "package0", Value: v, cdata: true}
}

func FPtr(name string, v uint64) Field {
	return Field{Name: name, Typ: "ptr", Pkg: "package0", Value: fmt.Sprintf("0x%016x", v), num: int64(v), isNum: true}
}

func FBool(name string, v bool) Field {
	s, n := "false", int64(0)
	if v {
		s, n = "true", 1
	}
	return Field{Name: name, Typ: "boolean", Pkg: "package0", Value: s, num: n, isNum: true}
}

// EventData is an event about to be written.
type EventData struct {
	Name   string
	Pkg    string
	Time   time.Time
	Fields []Field
	Thread int    // worker thread, for sqlos actions
	Stack  *Stack // call stack, rendered when a session asks for it (internal/standin/callstacks.go)
}

// EventCtx is the context actions and predicate sources are read from.
type EventCtx struct {
	SPID       int
	DBID       int
	DBName     string
	SQLText    string
	PlanHandle string
	TxnID      int64
	QueryHash  uint64
	PlanHash   uint64
	AppName    string
	HostName   string
	ClientPID  int
	User       string
	ServerName string
	// System marks a system task's event (log writer, lazy writer): its
	// session id is the task's, below the user range.
	System bool
	// TSQLStack is the sqlserver.tsql_stack action's value: the <frames>
	// element of the statement running and those that called it
	// (internal/standin/tsqlstack.go), "" outside any statement.
	TSQLStack string
}

func (c *EventCtx) actionValue(name string, ev *EventData, seq int64) (string, bool) {
	switch name {
	case "session_id":
		return strconv.Itoa(c.SPID), false
	case "request_id":
		return "0", false
	case "database_id":
		return strconv.Itoa(c.DBID), false
	case "database_name":
		return c.DBName, true
	case "sql_text":
		return c.SQLText, true
	case "plan_handle":
		if c.PlanHandle == "" {
			return strings.Repeat("0", 88), false
		}
		return c.PlanHandle, false
	case "transaction_id":
		return strconv.FormatInt(c.TxnID, 10), false
	case "query_hash", "query_hash_signed":
		if name == "query_hash_signed" {
			return strconv.FormatInt(int64(c.QueryHash), 10), false
		}
		return strconv.FormatUint(c.QueryHash, 10), false
	case "query_plan_hash", "query_plan_hash_signed":
		if name == "query_plan_hash_signed" {
			return strconv.FormatInt(int64(c.PlanHash), 10), false
		}
		return strconv.FormatUint(c.PlanHash, 10), false
	case "client_app_name":
		return c.AppName, true
	case "client_hostname":
		return c.HostName, true
	case "client_pid":
		return strconv.Itoa(c.ClientPID), false
	case "username", "server_principal_name", "nt_username", "session_nt_username":
		return c.User, true
	case "server_instance_name":
		return c.ServerName, true
	case "is_system":
		return strconv.FormatBool(c.System), false
	case "context_info":
		return "", false
	case "event_sequence":
		return strconv.FormatInt(seq, 10), false
	case "collect_system_time":
		return ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"), false
	case "task_address":
		return fmt.Sprintf("0x%016x", 0x000001E4A8C0C4E8+uint64(ev.Thread)*0x1c8), false
	case "worker_address":
		return fmt.Sprintf("0x%016x", 0x000001E4B2E70160+uint64(ev.Thread)*0x2060), false
	case "system_thread_id":
		return strconv.Itoa(4120 + ev.Thread*8), false
	case "scheduler_id", "cpu_id":
		return strconv.Itoa(ev.Thread % 4), false
	case "task_time":
		return "0", false
	case "callstack":
		return callstackValue(ev, false), false
	case "callstack_rva":
		return callstackValue(ev, true), true
	case "tsql_stack":
		// an xml-typed action: event_file XML prints it as child elements
		return c.TSQLStack, false
	}
	return "", false
}

// predicate evaluation

func (c *EventCtx) sourceValue(src sqlfront.XEName, ev *EventData) (any, bool) {
	if src.Package == "" {
		for _, f := range ev.Fields {
			if f.Name == src.Name {
				if f.isNum {
					return f.num, true
				}
				return f.Value, true
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

// Values is what predicate evaluation needs from the server's type system:
// SQL Server's ordering of two non-NULL values, a value's string form and
// LIKE matching, so that a predicate compares as a WHERE clause would.
type Values interface {
	Compare(a, b any) (int, error)
	String(v any) string
	Like(s, pattern string) bool
}

func EvalPred(p sqlfront.XEPred, c *EventCtx, ev *EventData, vals Values) bool {
	switch x := p.(type) {
	case nil:
		return true
	case *sqlfront.XEPredAnd:
		return EvalPred(x.L, c, ev, vals) && EvalPred(x.R, c, ev, vals)
	case *sqlfront.XEPredOr:
		return EvalPred(x.L, c, ev, vals) || EvalPred(x.R, c, ev, vals)
	case *sqlfront.XEPredNot:
		return !EvalPred(x.P, c, ev, vals)
	case *sqlfront.XEPredLeaf:
		v, ok := c.sourceValue(x.Source, ev)
		if !ok {
			return false
		}
		switch x.Op {
		case "LIKE", "NOT LIKE":
			s, _ := x.Value.(string)
			m := vals.Like(vals.String(v), s)
			return m == (x.Op == "LIKE")
		}
		// a map field compared with a string compares the map text
		if x.Source.Package == "" {
			if sv, isStr := x.Value.(string); isStr {
				for _, f := range ev.Fields {
					if f.Name == x.Source.Name && f.Text != "" {
						v = f.Text
						return CmpOp(x.Op, strings.Compare(strings.ToUpper(f.Text), strings.ToUpper(sv)))
					}
				}
			}
		}
		c2, err := vals.Compare(v, x.Value)
		if err != nil {
			return false
		}
		return CmpOp(x.Op, c2)
	}
	return false
}

func CmpOp(op string, c int) bool {
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

// RenderEvent writes one event as fn_xe_file_target_read_file returns it
// (withTypes false) or as ring_buffer target_data holds it (withTypes true).
func RenderEvent(b *strings.Builder, ev *EventData, actions []sqlfront.XEName, c *EventCtx, seq int64, withTypes bool, stamps *StampCache) {
	b.WriteString(`<event name="`)
	b.WriteString(ev.Name)
	b.WriteString(`" package="`)
	b.WriteString(ev.Pkg)
	b.WriteString(`" timestamp="`)
	b.WriteString(stamps.xeTimestamp(ev.Time))
	b.WriteString(`">`)
	for i := range ev.Fields {
		f := &ev.Fields[i]
		b.WriteString(`<data name="`)
		b.WriteString(f.Name)
		b.WriteString(`">`)
		if withTypes {
			b.WriteString(`<type name="`)
			b.WriteString(f.Typ)
			b.WriteString(`" package="`)
			b.WriteString(f.Pkg)
			b.WriteString(`"/>`)
		}
		b.WriteString("<value>")
		switch {
		case f.XMLBody:
			b.WriteString(f.Value)
		case f.cdata:
			writeCDATA(b, f.Value)
		default:
			b.WriteString(f.Value)
		}
		b.WriteString("</value>")
		if f.Text != "" {
			b.WriteString("<text>")
			writeCDATA(b, f.Text)
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

// StampCache remembers the last rendered timestamp: consecutive events
// mostly share a millisecond. Each writer (a Server, a GenerateTrace call)
// owns one, so no state is shared between goroutines.
type StampCache struct {
	ms   int64
	Text string
}

// xeTimestamp renders an event timestamp as XE's XML does: UTC with
// millisecond precision.
func (c *StampCache) xeTimestamp(t time.Time) string {
	ms := t.UnixMilli()
	if c != nil && c.Text != "" && c.ms == ms {
		return c.Text
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	if c != nil {
		c.ms, c.Text = ms, s
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
	case "tsql_stack":
		return "xml"
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

// Stack is one distinct call stack in both action forms: raw
// addresses and <frame> elements with module, PDB and RVA.
type Stack struct{ Addrs, RVAXML string }

// callstackValue is the action's value for ev: raw addresses for
// package0.callstack (what an event_file reader without module information
// prints), <frame> elements for package0.callstack_rva.
func callstackValue(ev *EventData, rva bool) string {
	if ev.Stack == nil {
		return ""
	}
	if rva {
		return ev.Stack.RVAXML
	}
	return ev.Stack.Addrs
}
