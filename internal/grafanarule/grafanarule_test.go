package grafanarule

import (
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

func wideFrame(fields ...*data.Field) *data.Frame {
	f := data.NewFrame("n", fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeNumericWide, TypeVersion: data.FrameTypeVersion{0, 1}}
	return f
}

// Distinct names with the same (empty) labels are duplicates to alerting:
// the instance key is the label set.
func TestAlertInstancesKeyOnLabelsOnly(t *testing.T) {
	ns, err := NumericContract(data.Frames{wideFrame(
		data.NewField("a", nil, []float64{1}), data.NewField("b", nil, []float64{2}))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AlertInstances(ns); err == nil || !strings.Contains(err.Error(), "duplicate results with labels {}") {
		t.Fatalf("AlertInstances = %v, want the duplicate-labels error", err)
	}
	ns, err = NumericContract(data.Frames{wideFrame(
		data.NewField("a", data.Labels{"metric": "a"}, []float64{1}), data.NewField("a", data.Labels{"metric": "b"}, []float64{2}))})
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := AlertInstances(ns); err != nil || len(keys) != 2 {
		t.Fatalf("distinct labels: %v %v", keys, err)
	}
}

func TestNumericContractRejects(t *testing.T) {
	str := wideFrame(data.NewField("a", nil, []float64{1}), data.NewField("s", nil, []string{"x"}))
	noType := data.NewFrame("n", data.NewField("a", nil, []float64{1}))
	twoRows := wideFrame(data.NewField("a", nil, []float64{1, 2}))
	multi := wideFrame(data.NewField("a", nil, []float64{1}), data.NewField("b", nil, []float64{1}))
	multi.Meta.Type = data.FrameTypeNumericMulti
	for name, fs := range map[string]data.Frames{
		"string in wide": {str}, "no type": {noType}, "two rows": {twoRows},
		"two wide frames":       {wideFrame(data.NewField("a", nil, []float64{1})), wideFrame(data.NewField("b", nil, []float64{1}))},
		"multi with two fields": {multi},
	} {
		if _, err := NumericContract(fs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNumericLongLabelsFromStrings(t *testing.T) {
	f := data.NewFrame("l", data.NewField("host", nil, []string{"a", "b"}), data.NewField("v", nil, []float64{1, 2}))
	f.Meta = &data.FrameMeta{Type: data.FrameTypeNumericLong, TypeVersion: data.FrameTypeVersion{0, 1}}
	ns, err := NumericContract(data.Frames{f})
	if err != nil || len(ns) != 2 || ns[1].Labels["host"] != "b" || ns[1].Value != 2 {
		t.Fatalf("long = %+v, %v", ns, err)
	}
}
