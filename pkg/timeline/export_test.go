package timeline

import "reflect"

// For the external tests (lanesappend_ext_test.go), which build traces
// with packages that import this one.
var (
	ReflectLanesJSON = reflectLanesJSON
	ReflectTraceJSON = reflectTraceJSON
)

// reflectiveLanes marshals lanes as MarshalJSON did before issue 29:
// json.Marshal of the wire types.
type reflectiveLanes struct{ l *Lanes }

func (r reflectiveLanes) MarshalJSON() ([]byte, error) { return reflectLanesJSON(r.l) }

// BeforeIssue29 is t with its lanes marshalled as before issue 29, for
// json.Marshal: encoding/json then compacts the lanes' bytes again, as it
// did. It writes what json.Marshal(t) writes.
func BeforeIssue29(t *Trace) any {
	return traceMirror(t, reflect.TypeFor[reflectiveLanes](), reflect.ValueOf(reflectiveLanes{&t.Lanes}))
}
