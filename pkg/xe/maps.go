package xe

import "strings"

// MapResolver turns a map key into its text, as sys.dm_xe_map_values lists
// them (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-map-values-transact-sql).
// The tracer and the exporter fill one per server; the binary .xel reader
// fills one from the file's metadata. Keys differ between SQL Server builds
// (ASYNC_IO_COMPLETION is 98 on 14.0.3192.2 and 186 on a 2026 build [R]), so
// nothing in this package knows any key.
type MapResolver interface {
	Text(mapName string, key uint64) (string, bool)
}

// MapTable is a MapResolver held in memory. The zero value is empty and
// ready to use; it is not safe for concurrent Add.
type MapTable struct {
	m map[mapKey]string
}

type mapKey struct {
	name string
	key  uint64
}

// Add records one row of sys.dm_xe_map_values (name, map_key, map_value).
// Map names are matched without regard to case.
func (t *MapTable) Add(mapName string, key uint64, text string) {
	if t.m == nil {
		t.m = make(map[mapKey]string)
	}
	t.m[mapKey{strings.ToLower(mapName), key}] = text
}

// Len returns the number of entries.
func (t *MapTable) Len() int { return len(t.m) }

// Text implements MapResolver.
func (t *MapTable) Text(mapName string, key uint64) (string, bool) {
	if t == nil || t.m == nil {
		return "", false
	}
	s, ok := t.m[mapKey{strings.ToLower(mapName), key}]
	return s, ok
}

// MapValue is a map field: its numeric key and its text.
type MapValue struct {
	Key uint64
	// Text is the name: from the event's <text> when it has one, otherwise
	// from the MapResolver. "" when neither knows it.
	Text string
	// Map is the map's name when known (from <type> or the field tables
	// below), e.g. "wait_types".
	Map string
	// FromResolver tells that Text came from the MapResolver, not the event.
	FromResolver bool
}

// String returns Text, or the key in brackets when the text is unknown.
func (m MapValue) String() string {
	if m.Text != "" {
		return m.Text
	}
	return "[" + uintString(m.Key) + "]"
}

// fieldMaps names the map behind a map field of an event, for event_file
// XML, which has no <type>. Only map *names* are listed; keys are never
// hard-coded. Confidence per docs/design/event-fields.md: [R] seen as <type> in real
// ring_buffer XML, [S] named by third-party scripts, [U] inferred.
var fieldMaps = map[[2]string]string{
	{"wait_info", "wait_type"}:              "wait_types",         // [R] X2
	{"wait_info", "opcode"}:                 "event_opcode",       // [R] X2
	{"wait_completed", "wait_type"}:         "wait_types",         // [R] X1 metadata
	{"wait_info_external", "wait_type"}:     "wait_types",         // [R]
	{"wait_info_external", "opcode"}:        "event_opcode",       // [R]
	{"lock_acquired", "mode"}:               "lock_mode",          // [R] X4
	{"lock_released", "mode"}:               "lock_mode",          // [R] X4 (same columns as lock_acquired [D])
	{"lock_escalation", "mode"}:             "lock_mode",          // [U] same column as the lock events
	{"lock_acquired", "resource_type"}:      "lock_resource_type", // [U] map name not seen in <type>
	{"lock_released", "resource_type"}:      "lock_resource_type", // [U]
	{"lock_escalation", "resource_type"}:    "lock_resource_type", // [U]
	{"lock_acquired", "owner_type"}:         "lock_owner_type",    // [U]
	{"lock_released", "owner_type"}:         "lock_owner_type",    // [U]
	{"lock_escalation", "owner_type"}:       "lock_owner_type",    // [U]
	{"error_reported", "category"}:          "error_category",     // [R] X2
	{"error_reported", "destination"}:       "error_destination",  // [R] X2 (a flag map: keys are bit sets)
	{"transaction_log", "operation"}:        "log_op",             // [S]
	{"blocked_process_report", "lock_mode"}: "lock_mode",          // [U]
}

// mapOf returns the map name of a field: from its <type> when it is not a
// package0 scalar type, else from fieldMaps.
func mapOf(event string, f *Field) string {
	if f.Value.Type != "" && f.Value.TypePackage != "package0" {
		return f.Value.Type
	}
	return fieldMaps[[2]string{event, f.Name}]
}

// MapField returns a map field's key and text. The text is the event's own
// <text> when present; otherwise maps (which may be nil) is asked, with the
// map name taken from <type> or from the known field tables. ok is false
// when the field is absent or its value is not a number.
func (ev *Event) MapField(name string, maps MapResolver) (MapValue, bool) {
	for i := range ev.Fields {
		f := &ev.Fields[i]
		if f.Name != name {
			continue
		}
		key, ok := f.Value.Uint()
		if !ok {
			return MapValue{}, false
		}
		mv := MapValue{Key: key, Map: mapOf(ev.Name, f)}
		if f.Value.HasText {
			mv.Text = f.Value.Text
		} else if maps != nil && mv.Map != "" {
			if t, ok := maps.Text(mv.Map, key); ok {
				mv.Text, mv.FromResolver = t, true
			}
		}
		return mv, true
	}
	return MapValue{}, false
}

func uintString(u uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return string(b[i:])
}
