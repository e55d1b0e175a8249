package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// escalationsFrame is the trace's lock_escalation events, one row each:
// when, the lock it became (mode on OBJECT or HOBT), on which object, how
// many row and page locks it replaced, and why. It goes with the lanes
// but is not a lane: escalations are a handful per statement and tied to
// no operator. It is only sent when there is one, so a response without
// escalations keeps its frames.
func (v *view) escalationsFrame() *data.Frame {
	es := v.tr.Lanes.Escalation
	if len(es) == 0 {
		return nil
	}
	n := len(es)
	at, us := make([]time.Time, n), make([]int64, n)
	mode, rtype, obj, cause := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	escalated, hobt := make([]int64, n), make([]int64, n)
	for i := range es {
		e := &es[i]
		at[i], us[i] = v.at(e.T), e.T
		mode[i], rtype[i], obj[i], cause[i] = e.Mode, e.ResourceType, objectOr(v.tr.ObjectOf(e.Object), ""), e.Cause
		escalated[i], hobt[i] = int64(e.EscalatedLock), int64(e.HoBTLocks)
	}
	f := data.NewFrame("escalations",
		data.NewField("time", nil, at),
		unit(data.NewField("tUs", nil, us), "µs"),
		data.NewField("mode", nil, mode),
		data.NewField("resourceType", nil, rtype),
		data.NewField("object", nil, obj),
		data.NewField("escalatedLockCount", nil, escalated),
		data.NewField("hobtLockCount", nil, hobt),
		data.NewField("cause", nil, cause),
	)
	f.Meta = v.meta(custom{"source": "lock_escalation"})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}
