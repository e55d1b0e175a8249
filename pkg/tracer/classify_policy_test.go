package tracer

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

func TestValidatePolicy(t *testing.T) {
	var re *tsql.RefusedError
	if _, err := (Options{SQL: "SELECT 1", ClearBufferPool: true}).Validate(Policy{}); !errors.As(err, &re) || !strings.Contains(re.Reason, "buffer pool") {
		t.Errorf("clearing without the policy: %v", err)
	}
	if _, err := (Options{SQL: "SELECT 1", ClearBufferPool: true}).Validate(Policy{AllowClearBufferPool: true}); err != nil {
		t.Errorf("clearing with the policy: %v", err)
	}
	if _, err := (Options{SQL: "DELETE FROM t"}).Validate(Policy{Modifications: ModificationsRefuse}); !errors.As(err, &re) || !strings.Contains(re.Reason, "DELETE") {
		t.Errorf("modification refused by policy: %v", err)
	}
	if c, err := (Options{SQL: "DELETE FROM t"}).Validate(Policy{}); err != nil || !c.Modification {
		t.Errorf("modification in rollback mode: %+v %v", c, err)
	}
	if _, err := (Options{SQL: ""}).Validate(Policy{}); !errors.As(err, &re) {
		t.Errorf("empty SQL: %v", err)
	}
	_, err := (Options{SQL: "SELECT 1", MaxEvents: -1, Timeout: -1, TraceDirectory: "a\nb"}).Validate(Policy{})
	if err == nil || !strings.Contains(err.Error(), "max events") || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), "trace directory") {
		t.Errorf("bad values: %v", err)
	}
}
