package sqlfront

import (
	"fmt"
	"strings"
)

// SaveTranStmt is SAVE TRAN[SACTION] name.
type SaveTranStmt struct{ Name string }

func (*SaveTranStmt) stmtNode() {}

// exprKey renders an expression structurally, for GROUP BY matching.
func exprKey(e Expr) string {
	switch x := e.(type) {
	case *ColRef:
		return "col:" + strings.ToLower(x.Parts[len(x.Parts)-1])
	case *Literal:
		return fmt.Sprintf("lit:%v", x.V)
	case *FuncCall:
		var parts []string
		for _, a := range x.Args {
			parts = append(parts, exprKey(a))
		}
		return x.Name + "(" + strings.Join(parts, ",") + ")"
	case *CastExpr:
		return "cast(" + exprKey(x.E) + "," + x.T.String() + ")"
	case *BinaryExpr:
		return "(" + exprKey(x.L) + x.Op + exprKey(x.R) + ")"
	case *VarRef:
		return "var:" + strings.ToLower(x.Name)
	}
	return fmt.Sprintf("%T:%p", e, e)
}
