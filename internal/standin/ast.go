package standin

// Statements produced by the parser. Each shape here is one the stand-in
// executes; anything else is refused by the parser with Msg 102/156.

type stmt interface{ stmtNode() }

type selectStmt struct {
	Distinct bool
	Top      expr
	Items    []selectItem
	From     tableRef // nil when there is no FROM
	Where    expr
	GroupBy  []expr
	Having   expr
	OrderBy  []orderItem
	MaxDOP   int // OPTION (MAXDOP n); 0 when absent
}

type selectItem struct {
	Star     bool
	StarQual string
	Expr     expr
	Alias    string
}

type orderItem struct {
	Expr expr
	Desc bool
}

type tableRef interface{ tableNode() }

// tableName is a (possibly multi-part) table or view name in FROM.
type tableName struct {
	Parts     []string // e.g. ["QueryReplayDemo","dbo","Orders"]
	Alias     string
	IndexHint string // WITH (INDEX(name)) or INDEX(n)
	Hints     []string
}

// tableFunc is a table-valued function call in FROM, e.g. fn_dblog(NULL, NULL).
type tableFunc struct {
	Parts []string
	Args  []expr
	Alias string
	Bulk  string // OPENROWSET(BULK path, SINGLE_BLOB): the format option
}

type joinRef struct {
	Left, Right tableRef
	Kind        string // INNER, LEFT, CROSS, APPLY, OUTER APPLY
	On          expr
}

type derivedTable struct {
	Sel     *selectStmt
	Values  [][]expr // (VALUES (…), (…)) AS alias(col, …) when Sel is nil
	Alias   string
	Columns []string
}

func (*tableName) tableNode()    {}
func (*tableFunc) tableNode()    {}
func (*joinRef) tableNode()      {}
func (*derivedTable) tableNode() {}

type insertStmt struct {
	Table   []string
	Columns []string
	Rows    [][]expr
}

type setClause struct {
	Column string
	Expr   expr
}

type updateStmt struct {
	Table []string
	Sets  []setClause
	Where expr
}

type deleteStmt struct {
	Table []string
	Where expr
}

type beginTranStmt struct{ Name string }
type commitStmt struct{ Name string }
type rollbackStmt struct{ Name string }
type ifStmt struct {
	Cond       expr
	Then, Else stmt
}
type blockStmt struct{ Stmts []stmt }
type setOptionStmt struct {
	Options []string
	Value   string
}
type setVarStmt struct {
	Var  string
	Expr expr
}
type declareVar struct {
	Name string
	Type SQLType
	Init expr
}
type declareStmt struct{ Vars []declareVar }
type checkpointStmt struct{}
type dbccStmt struct {
	Command string
	Args    []expr
	With    []string
}
type useStmt struct{ DB string }
type waitforStmt struct{ Delay string }
type execStmt struct {
	Proc []string
	Args []expr
}
type printStmt struct{ Expr expr }

// Extended Events DDL.

type xeEventSpec struct {
	Package, Name string
	Settings      []xeSetting
	Actions       []xeName
	Predicate     xePred // nil when there is no WHERE
	PredicateText string
}

type xeName struct{ Package, Name string }

type xeSetting struct {
	Name  string
	Value any // int64 or string
}

type xeTargetSpec struct {
	Package, Name string
	Settings      []xeSetting
}

type xeOption struct {
	Name  string
	Value string // normalised text, e.g. "4096 KB", "30 SECONDS", "ON"
	Num   int64
}

type createEventSessionStmt struct {
	Name     string
	Database bool // ON DATABASE instead of ON SERVER
	Events   []xeEventSpec
	Targets  []xeTargetSpec
	Options  []xeOption
}

type alterEventSessionStmt struct {
	Name        string
	Database    bool
	State       string // START, STOP or ""
	AddEvents   []xeEventSpec
	DropEvents  []xeName
	AddTargets  []xeTargetSpec
	DropTargets []xeName
	Options     []xeOption
}

type dropEventSessionStmt struct {
	Name     string
	Database bool
}

func (*selectStmt) stmtNode()             {}
func (*insertStmt) stmtNode()             {}
func (*updateStmt) stmtNode()             {}
func (*deleteStmt) stmtNode()             {}
func (*beginTranStmt) stmtNode()          {}
func (*commitStmt) stmtNode()             {}
func (*rollbackStmt) stmtNode()           {}
func (*ifStmt) stmtNode()                 {}
func (*blockStmt) stmtNode()              {}
func (*setOptionStmt) stmtNode()          {}
func (*setVarStmt) stmtNode()             {}
func (*declareStmt) stmtNode()            {}
func (*checkpointStmt) stmtNode()         {}
func (*dbccStmt) stmtNode()               {}
func (*useStmt) stmtNode()                {}
func (*waitforStmt) stmtNode()            {}
func (*execStmt) stmtNode()               {}
func (*printStmt) stmtNode()              {}
func (*createEventSessionStmt) stmtNode() {}
func (*alterEventSessionStmt) stmtNode()  {}
func (*dropEventSessionStmt) stmtNode()   {}

// Expressions.

type expr interface{ exprNode() }

type literal struct{ V any }
type varRef struct{ Name string }
type colRef struct{ Parts []string }
type pseudoCol struct {
	Name string // %%lockres%% or %%physloc%%
	Qual string
}
type funcCall struct {
	Name     string // upper case, schema-qualified names joined with '.'
	Args     []expr
	Star     bool
	Distinct bool
}
type castExpr struct {
	E expr
	T SQLType
}
type unaryExpr struct {
	Op string
	E  expr
}
type binaryExpr struct {
	Op   string
	L, R expr
}
type isNullExpr struct {
	E   expr
	Not bool
}
type inExpr struct {
	E    expr
	List []expr
	Sub  *selectStmt
	Not  bool
}
type likeExpr struct {
	E, Pattern expr
	Not        bool
}
type betweenExpr struct {
	E, Lo, Hi expr
	Not       bool
}
type whenClause struct{ Cond, Result expr }
type caseExpr struct {
	Operand expr
	Whens   []whenClause
	Else    expr
}
type subqueryExpr struct{ Sel *selectStmt }
type existsExpr struct{ Sel *selectStmt }

func (*literal) exprNode()      {}
func (*varRef) exprNode()       {}
func (*colRef) exprNode()       {}
func (*pseudoCol) exprNode()    {}
func (*funcCall) exprNode()     {}
func (*castExpr) exprNode()     {}
func (*unaryExpr) exprNode()    {}
func (*binaryExpr) exprNode()   {}
func (*isNullExpr) exprNode()   {}
func (*inExpr) exprNode()       {}
func (*likeExpr) exprNode()     {}
func (*betweenExpr) exprNode()  {}
func (*caseExpr) exprNode()     {}
func (*subqueryExpr) exprNode() {}
func (*existsExpr) exprNode()   {}

// XE predicates.

type xePred interface{ predNode() }

type xePredAnd struct{ L, R xePred }
type xePredOr struct{ L, R xePred }
type xePredNot struct{ P xePred }

// xePredLeaf compares a source (an event field, or a package-qualified
// predicate source such as sqlserver.session_id) with a constant.
type xePredLeaf struct {
	Source     xeName // Package empty for an event field
	Op         string // =, <>, >, >=, <, <=, LIKE, NOT LIKE
	Value      any    // int64 or string
	Comparator string // package0.greater_than_uint64 etc. when written as a function
}

func (*xePredAnd) predNode()  {}
func (*xePredOr) predNode()   {}
func (*xePredNot) predNode()  {}
func (*xePredLeaf) predNode() {}
