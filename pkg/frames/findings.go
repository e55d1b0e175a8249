package frames

import (
	"encoding/json"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/findings"
)

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil { // the findings' own types always marshal
		return json.RawMessage("null")
	}
	return b
}

// findingsFrame is docs/frames.md §3.10: one row per finding, in the
// report's order.
func (v *view) findingsFrame() *data.Frame {
	rep := v.src.Findings
	n := len(rep.Findings)
	var (
		rule, sev, conf, title, detail, hint, ref = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		start, end                                = make([]*time.Time, n), make([]*time.Time, n)
		startUs, endUs, total                     = make([]int64, n), make([]int64, n), make([]int64, n)
		primary                                   = make([]*int64, n)
		ops, ev, nums, why                        = make([]json.RawMessage, n), make([]json.RawMessage, n), make([]json.RawMessage, n), make([]json.RawMessage, n)
	)
	counts := map[string]int{string(findings.SeverityCritical): 0, string(findings.SeverityWarning): 0, string(findings.SeverityInfo): 0}
	var notices []data.Notice
	for i, f := range rep.Findings {
		rule[i], sev[i], conf[i], title[i], detail[i], hint[i], ref[i] = f.Rule, string(f.Severity), string(f.Confidence), f.Title, f.Detail, f.Hint, f.Reference
		startUs[i], endUs[i], total[i] = f.Start, f.End, int64(f.EvidenceTotal)
		if f.EvidenceTotal > 0 || f.Start != 0 || f.End != 0 {
			s, e := v.at(f.Start), v.at(f.End)
			start[i], end[i] = &s, &e
		}
		if len(f.Operators) > 0 {
			id := int64(f.Operators[0].NodeID)
			primary[i] = &id
		}
		ops[i], ev[i], nums[i] = rawJSON(orEmpty(f.Operators)), rawJSON(orEmpty(f.Evidence)), rawJSON(f.Numbers)
		why[i] = rawJSON(orEmpty(f.ConfidenceReasons))
		counts[string(f.Severity)]++
		if f.Severity == findings.SeverityCritical {
			notices = append(notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: f.Title})
		}
	}
	refField := data.NewField("reference", nil, ref)
	refField.Config = &data.FieldConfig{Links: []data.DataLink{{Title: "Documentation", URL: "${__value.raw}", TargetBlank: true}}}
	titleField := data.NewField("title", nil, title)
	titleField.Config = &data.FieldConfig{DisplayName: "Finding"}
	f := data.NewFrame("findings",
		data.NewField("rule", nil, rule), data.NewField("severity", nil, sev), data.NewField("confidence", nil, conf), titleField,
		data.NewField("detail", nil, detail), data.NewField("hint", nil, hint), refField,
		data.NewField("start", nil, start), data.NewField("end", nil, end),
		unit(data.NewField("startUs", nil, startUs), "µs"), unit(data.NewField("endUs", nil, endUs), "µs"),
		data.NewField("primaryNodeId", nil, primary), data.NewField("operators", nil, ops), data.NewField("evidence", nil, ev),
		data.NewField("evidenceTotal", nil, total), data.NewField("numbers", nil, nums), data.NewField("confidenceReasons", nil, why))
	f.Meta = v.meta(custom{"counts": counts, "notes": orEmpty(rep.Notes), "config": rep.Config, "rules": findings.Rules()})
	f.Meta.PreferredVisualization = data.VisTypeTable
	f.Meta.Notices = notices
	return f
}
