package showplan_test

import (
	"fmt"
	"os"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

func ExampleParseBytes() {
	data, err := os.ReadFile("testdata/plans/html-query-plan/columns_with_no_statistics.sqlplan")
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := showplan.ParseBytes(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range plan.Statements[0].Operators {
		fmt.Printf("node %d %s (%s): %s, blocking inputs %v\n",
			op.NodeID, op.PhysicalOp, op.LogicalOp, op.Semantics.Behavior, op.Semantics.BlockingInputs)
	}
	// Output:
	// node 0 Hash Match (Right Outer Join): hybrid, blocking inputs [1]
	// node 1 Index Scan (Index Scan): streaming, blocking inputs []
	// node 2 Clustered Index Scan (Clustered Index Scan): streaming, blocking inputs []
}
