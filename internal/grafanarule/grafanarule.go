// Package grafanarule restates, for tests, the rules Grafana applies to the
// numeric frames a datasource returns to alerting and server-side
// expressions, where Grafana's own code is not importable. Production code
// never imports it: it is a test oracle, and each rule names the Grafana
// document or source file it was taken from.
package grafanarule

import (
	"errors"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Number is one value of a numeric response as Grafana's server-side
// expressions see it: a metric name, its labels and the value.
type Number struct {
	Name   string
	Labels data.Labels
	Value  float64
}

// NumericContract checks the data plane numeric contract
// (https://grafana.com/developers/dataplane/numeric) for one response and
// returns its numbers. numeric-wide: one frame, at most one row, every field
// numeric (no time, no strings). numeric-multi: every frame has exactly one
// numeric field and at most one row. numeric-long: numeric fields are the
// metrics and string fields become labels, one row per label set.
func NumericContract(fs data.Frames) ([]Number, error) {
	if len(fs) == 0 {
		return nil, errors.New("no frames")
	}
	kind := frameType(fs[0])
	for _, f := range fs[1:] {
		if frameType(f) != kind {
			return nil, fmt.Errorf("frame %q is %q, the first is %q: one numeric kind per response", f.Name, frameType(f), kind)
		}
	}
	switch kind {
	case data.FrameTypeNumericWide:
		if len(fs) != 1 {
			return nil, fmt.Errorf("numeric-wide has one frame, got %d", len(fs))
		}
		return wide(fs[0], false)
	case data.FrameTypeNumericMulti:
		var out []Number
		for _, f := range fs {
			ns, err := wide(f, true)
			if err != nil {
				return nil, err
			}
			out = append(out, ns...)
		}
		return out, nil
	case data.FrameTypeNumericLong:
		if len(fs) != 1 {
			return nil, fmt.Errorf("numeric-long has one frame, got %d", len(fs))
		}
		return long(fs[0])
	}
	return nil, fmt.Errorf("frame %q has meta.type %q, not a numeric data plane type", fs[0].Name, kind)
}

func frameType(f *data.Frame) data.FrameType {
	if f.Meta == nil {
		return ""
	}
	return f.Meta.Type
}

// wide reads a numeric-wide frame (or, with one=true, a numeric-multi
// frame, which holds a single numeric field).
func wide(f *data.Frame, one bool) ([]Number, error) {
	if f.Meta.TypeVersion == (data.FrameTypeVersion{}) {
		return nil, fmt.Errorf("frame %q has no meta.typeVersion", f.Name)
	}
	if n, err := f.RowLen(); err != nil || n > 1 {
		return nil, fmt.Errorf("frame %q: %d rows (%v), numeric frames have at most one", f.Name, n, err)
	}
	if one && len(f.Fields) != 1 {
		return nil, fmt.Errorf("numeric-multi frame %q has %d fields, want 1", f.Name, len(f.Fields))
	}
	var out []Number
	for _, fd := range f.Fields {
		if !fd.Type().Numeric() {
			return nil, fmt.Errorf("frame %q field %q is %s: wide numeric frames hold numbers only", f.Name, fd.Name, fd.Type())
		}
		if fd.Len() == 1 {
			v, err := fd.FloatAt(0)
			if err != nil {
				return nil, fmt.Errorf("frame %q field %q: %w", f.Name, fd.Name, err)
			}
			out = append(out, Number{Name: fd.Name, Labels: fd.Labels, Value: v})
		}
	}
	return out, nil
}

// long reads a numeric-long frame: string fields are label columns.
func long(f *data.Frame) ([]Number, error) {
	var out []Number
	for row := range f.Rows() {
		labels := data.Labels{}
		for _, fd := range f.Fields {
			if fd.Type() == data.FieldTypeString {
				labels[fd.Name] = fd.At(row).(string)
			}
		}
		for _, fd := range f.Fields {
			switch {
			case fd.Type() == data.FieldTypeString:
			case fd.Type().Numeric():
				v, err := fd.FloatAt(row)
				if err != nil {
					return nil, fmt.Errorf("frame %q field %q: %w", f.Name, fd.Name, err)
				}
				out = append(out, Number{Name: fd.Name, Labels: labels.Copy(), Value: v})
			default:
				return nil, fmt.Errorf("frame %q field %q is %s: numeric-long holds numbers and string labels", f.Name, fd.Name, fd.Type())
			}
		}
	}
	return out, nil
}

// AlertInstances applies alert evaluation's uniqueness rule: after the
// expressions, each number is one alert instance keyed by its labels alone
// (the metric name is not part of the key), and two numbers with the same
// label set fail the whole rule with "frame cannot uniquely be identified
// by its labels: has duplicate results with labels {…}". Source: grafana/grafana
// pkg/services/ngalert/eval/eval.go (evaluateExecutionResult). It returns
// the instance keys.
func AlertInstances(ns []Number) ([]string, error) {
	seen := map[string]bool{}
	keys := make([]string, 0, len(ns))
	for _, n := range ns {
		k := n.Labels.String()
		if seen[k] {
			return nil, fmt.Errorf("frame cannot uniquely be identified by its labels: has duplicate results with labels {%s}", k)
		}
		seen[k] = true
		keys = append(keys, k)
	}
	return keys, nil
}
