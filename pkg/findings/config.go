package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Config holds every rule's thresholds. DefaultConfig gives the documented
// defaults; ParseConfig overlays a JSON object on them and Set changes one
// field by its JSON name (what `queryreplay findings --set` uses). Shares
// are fractions (0.5 = 50%), times are µs, memory is KB.
type Config struct {
	ReadShare float64 `json:"readShare" doc:"reads-concentrated: the operator's share of the statement's reads"`
	MinReads  int64   `json:"minReads" doc:"reads-concentrated: fewest reads (pages) the operator must have done"`
	// ReadsWarning: 10,000 pages is 80 MB read by one operator; below it
	// (or when the operator took less than warningTimeShare of the time)
	// the finding is info.
	ReadsWarning int64 `json:"readsWarning" doc:"reads-concentrated: reads (pages) that, with warningTimeShare of the time, make it a warning"`

	ResidualRatio float64 `json:"residualRatio" doc:"residual-predicate: rows read per row returned"`
	MinRowsRead   int64   `json:"minRowsRead" doc:"residual-predicate: fewest rows the operator must have read"`

	GrantExcessShare float64 `json:"grantExcessShare" doc:"grant-excess: used memory at most this share of the grant"`
	// MinGrantKB: grants under 5 MB come from the small-query resource
	// semaphore (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-resource-semaphores-transact-sql)
	// and rarely keep other queries waiting.
	MinGrantKB int64 `json:"minGrantKB" doc:"grant-excess: smallest grant (KB) worth reporting, unless the statement cost exceeds smallQueryCost"`
	// SmallQueryCost: a statement costing more (and not a trivial plan)
	// takes its grant from the regular semaphore whatever its size (same
	// reference).
	SmallQueryCost  float64 `json:"smallQueryCost" doc:"grant-excess: statement cost above which a grant under minGrantKB is reported too"`
	GrantFullShare  float64 `json:"grantFullShare" doc:"grant-too-small: a spill with at least this share of the grant used"`
	GrantShortShare float64 `json:"grantShortShare" doc:"grant-too-small: granted at most this share of what was requested"`

	MinGrantWaitUs int64 `json:"minGrantWaitUs" doc:"grant-wait: least RESOURCE_SEMAPHORE wait (µs)"`
	MinLockWaitUs  int64 `json:"minLockWaitUs" doc:"blocking: least lock wait (µs) on one resource"`
	// CriticalWaitShare: a wait taking this share of the statement's
	// duration makes grant-wait and blocking critical.
	CriticalWaitShare float64 `json:"criticalWaitShare" doc:"grant-wait, blocking: share of the run time that makes the finding critical"`

	ColdCacheShare   float64 `json:"coldCacheShare" doc:"cold-cache: share of the logical reads that came from disk"`
	MinPhysicalReads int64   `json:"minPhysicalReads" doc:"cold-cache: fewest pages read from disk"`

	// SkewShare places the busiest thread's share of the rows between an
	// even share (0) and all of them (1): (top/rows − 1/n) / (1 − 1/n).
	// Unlike top over average it means the same at DOP 2 and DOP 16: 0.5
	// is 75% of the rows on one of 2 threads, 53% on one of 16.
	SkewShare   float64 `json:"skewShare" doc:"parallel-skew: busiest thread's share of the rows, from an even share (0) to all of them (1)"`
	MinSkewRows int64   `json:"minSkewRows" doc:"parallel-skew: fewest rows the operator must have produced"`

	ParallelWaitShare float64 `json:"parallelWaitShare" doc:"parallelism-waits: CX* share of all wait time"`
	MinParallelWaitUs int64   `json:"minParallelWaitUs" doc:"parallelism-waits: least CX* wait time (µs)"`

	// RowGoalFactor and MinRowGoalRows: a row goal is reported when the
	// operator produced 10× the rows its row-goal estimate allowed, and at
	// least 1,000: below that, any plan is fast enough.
	RowGoalFactor  float64 `json:"rowGoalFactor" doc:"row-goal: actual rows over the row-goal estimate"`
	MinRowGoalRows int64   `json:"minRowGoalRows" doc:"row-goal: fewest rows the operator must have produced"`
	// MinSpoolRebinds: a spool re-running its input 1,000 times (or an
	// eager index spool sought that often) is a pattern, not a one-off.
	MinSpoolRebinds int64 `json:"minSpoolRebinds" doc:"spool-rebinds: fewest rebinds (or, for an eager index spool, seeks)"`
	// WarningTimeShare: operator-bound findings whose operator (with its
	// inputs) took less of the statement's elapsed time are info.
	WarningTimeShare float64 `json:"warningTimeShare" doc:"share of the statement's elapsed time an operator must take for its finding to be a warning"`

	// UdfTimeShare and MinUdfMs: scalar UDFs taking a quarter of the
	// statement's time, and at least 100 ms, are where its time went.
	UdfTimeShare float64 `json:"udfTimeShare" doc:"udf-time: scalar UDFs' share of the statement's elapsed time"`
	MinUdfMs     int64   `json:"minUdfMs" doc:"udf-time: least time (ms) in scalar UDFs"`
	// PlanWaitShare and MinPlanWaitMs: the plan's workers waiting a quarter
	// of their time, and at least 100 ms, is worth saying when the trace
	// did not capture waits itself.
	PlanWaitShare float64 `json:"planWaitShare" doc:"plan-waits: the plan's wait time over elapsed × workers"`
	MinPlanWaitMs int64   `json:"minPlanWaitMs" doc:"plan-waits: least wait time (ms) in the plan's WaitStats"`

	MinSplits     int `json:"minSplits" doc:"page-splits: fewest splits on one index and kind"`
	SplitsWarning int `json:"splitsWarning" doc:"page-splits: splits that make the finding a warning"`

	MinLogRecords   int   `json:"minLogRecords" doc:"log-volume: fewest log records"`
	LogBytesWarning int64 `json:"logBytesWarning" doc:"log-volume: bytes of log that make the finding a warning"`

	LostShareLow      float64 `json:"lostShareLow" doc:"confidence: lost events over all events that make event-based findings low"`
	AmbiguousShareLow float64 `json:"ambiguousShareLow" doc:"confidence: ambiguous or timing-only evidence share that makes a finding low (any makes it medium)"`
	AmbiguousShare    float64 `json:"ambiguousShare" doc:"events-ambiguous: share of the data lanes' entries (reads, writes, locks, memory, splits, log) that are ambiguous or unmatched"`
	MinAmbiguous      int     `json:"minAmbiguous" doc:"events-ambiguous: fewest ambiguous or unmatched entries to report"`

	MaxEvidence int `json:"maxEvidence" doc:"evidence entries kept per finding (evidenceTotal counts all)"`
}

// DefaultConfig returns the documented defaults. They are QueryReplay's
// own choices, picked so that the stand-in's control scenarios stay silent
// and a DBA would still want to hear about what crosses them.
func DefaultConfig() Config {
	return Config{
		ReadShare: 0.5, MinReads: 1000, ReadsWarning: 10000,
		ResidualRatio: 10, MinRowsRead: 1000,
		GrantExcessShare: 0.1, MinGrantKB: 5120, SmallQueryCost: 3, GrantFullShare: 0.95, GrantShortShare: 0.5,
		MinGrantWaitUs: 1000, MinLockWaitUs: 1000, CriticalWaitShare: 0.5,
		ColdCacheShare: 0.5, MinPhysicalReads: 8,
		SkewShare: 0.5, MinSkewRows: 1000,
		ParallelWaitShare: 0.5, MinParallelWaitUs: 1000,
		RowGoalFactor: 10, MinRowGoalRows: 1000, MinSpoolRebinds: 1000, WarningTimeShare: 0.25,
		UdfTimeShare: 0.25, MinUdfMs: 100, PlanWaitShare: 0.25, MinPlanWaitMs: 100,
		MinSplits: 100, SplitsWarning: 1000,
		MinLogRecords: 1000, LogBytesWarning: 64 << 20,
		LostShareLow: 0.05, AmbiguousShareLow: 0.5, AmbiguousShare: 0.25, MinAmbiguous: 10,
		MaxEvidence: 200,
	}
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("json")
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Float64:
			x := f.Float()
			if x < 0 || x != x {
				return fmt.Errorf("findings config: %s is %v; it must be a number ≥ 0", name, x)
			}
			if strings.HasSuffix(name, "Share") && x > 1 {
				return fmt.Errorf("findings config: %s is %v; a share is between 0 and 1", name, x)
			}
		case reflect.Int, reflect.Int64:
			if f.Int() < 0 {
				return fmt.Errorf("findings config: %s is %d; it must be ≥ 0", name, f.Int())
			}
		}
	}
	if c.MaxEvidence == 0 {
		return fmt.Errorf("findings config: maxEvidence must be at least 1")
	}
	return nil
}

// ParseConfig reads a JSON object of thresholds over the defaults. Unknown
// keys are an error (a misspelt threshold must not be silently ignored).
func ParseConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	// encoding/json matches keys case-insensitively; a threshold's name
	// must be exact.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return c, fmt.Errorf("findings config: %w", err)
	}
	known := map[string]bool{}
	for _, f := range c.Fields() {
		known[f.Name] = true
	}
	for k := range keys {
		if !known[k] {
			return c, fmt.Errorf("findings config: no threshold named %q", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("findings config: %w", err)
	}
	return c, c.Validate()
}

// Set changes the threshold whose JSON name is name ("readShare") to value.
func (c *Config) Set(name, value string) error {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("json") != name {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Float64:
			x, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return fmt.Errorf("findings config: %s: %q is not a number", name, value)
			}
			f.SetFloat(x)
		default:
			x, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("findings config: %s: %q is not an integer", name, value)
			}
			f.SetInt(x)
		}
		return c.Validate()
	}
	return fmt.Errorf("findings config: no threshold named %q (see ConfigFields)", name)
}

// ConfigField describes one threshold.
type ConfigField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Doc   string `json:"doc"`
}

// Fields lists c's thresholds with their values and meanings, in
// declaration order.
func (c Config) Fields() []ConfigField {
	v := reflect.ValueOf(c)
	t := v.Type()
	out := make([]ConfigField, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		out = append(out, ConfigField{Name: sf.Tag.Get("json"), Value: fmt.Sprint(v.Field(i).Interface()), Doc: sf.Tag.Get("doc")})
	}
	return out
}
