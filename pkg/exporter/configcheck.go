package exporter

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

var errEOF = io.EOF

// configSchema is the type checkNode walks the YAML tree against.
var configSchema = reflect.TypeFor[Config]()

var durationType = reflect.TypeFor[Duration]()

// checkNode reports every unknown key and every scalar that does not fit
// its field, with the field's path (targets[0].waits.min_duration), before
// the tree is decoded, so that one run lists all problems and each names
// where it is. yaml.v3's own errors give only a line and a Go type name.
func checkNode(n *yaml.Node, t reflect.Type, path string, problems *[]string) {
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			checkNode(c, t, path, problems)
		}
		return
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	bad := func(format string, args ...any) {
		where := path
		if where == "" {
			where = "(top level)"
		}
		*problems = append(*problems, fmt.Sprintf("%s: %s (line %d)", where, fmt.Sprintf(format, args...), n.Line))
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // an empty value keeps the default
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		if n.Kind != yaml.ScalarNode {
			bad("must be a duration such as 5s or 1m30s")
			return
		}
		if d, err := time.ParseDuration(n.Value); err != nil {
			bad("%q is not a duration (such as 5s or 1m30s)", n.Value)
		} else if d < 0 {
			bad("%q must not be negative", n.Value)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			bad("must be a mapping of keys to values")
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			f, ok := fields[key]
			if !ok {
				names := make([]string, 0, len(fields))
				for k := range fields {
					names = append(names, k)
				}
				slices.Sort(names)
				*problems = append(*problems, fmt.Sprintf("%s: unknown field (line %d; known: %s)", join(path, key), n.Content[i].Line, strings.Join(names, ", ")))
				continue
			}
			checkNode(val, f, join(path, key), problems)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			bad("must be a list")
			return
		}
		for i, c := range n.Content {
			checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			bad("must be a mapping")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), problems)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			bad("must be a string")
		}
	case reflect.Int:
		if n.Kind != yaml.ScalarNode {
			bad("must be a whole number")
		} else if _, err := strconv.Atoi(n.Value); err != nil {
			bad("%q is not a whole number", n.Value)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
			bad("must be true or false")
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of a struct to their field types; unexported
// fields have none.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		out[tag] = f.Type
	}
	return out
}

// UnmarshalYAML reads a duration; checkNode has already rejected bad text.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}
