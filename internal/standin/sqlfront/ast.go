package sqlfront

// Statements produced by the parser. Each shape here is one the stand-in
// executes; anything else is refused by the parser with Msg 102/156.

type Stmt interface{ stmtNode() }

// SelectStmt is a query expression: a query specification (Op == "") or a
// set operation of Left and Right (UNION/INTERSECT/EXCEPT). ORDER BY,
// OFFSET/FETCH, OPTION and WITH (CTEs) belong to the outermost one.
type SelectStmt struct {
	With []*CTEDef

	Op          string // "", "UNION", "INTERSECT", "EXCEPT"
	All         bool
	Left, Right *SelectStmt

	Distinct     bool
	Top          Expr
	TopPercent   bool
	WithTies     bool
	Items        []SelectItem
	Into         []string // SELECT … INTO name
	From         TableRef // nil when there is no FROM
	Where        Expr
	GroupBy      []Expr  // the distinct grouping expressions
	GroupingSets [][]int // ROLLUP/CUBE/GROUPING SETS: each set lists GroupBy positions; nil = one set of all
	GroupKind    string  // "", "ROLLUP", "CUBE", "GROUPING SETS"
	Having       Expr
	OrderBy      []OrderItem
	Offset       Expr
	Fetch        Expr
	Opts         QueryOptions
	MaxDOP       int // OPTION (MAXDOP n); 0 when absent
}

// QueryOptions are the OPTION (…) query hints the stand-in honours
// (https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-query).
type QueryOptions struct {
	MaxDOP       int
	MaxRecursion int    // -1: not given (default 100)
	Join         string // LOOP, HASH or MERGE JOIN forced for every join
	MinGrant     float64
	MaxGrant     float64 // 0: not given
	Recompile    bool
	ForceOrder   bool
}

// CTEDef is one common table expression of a WITH clause.
type CTEDef struct {
	Name    string
	Columns []string
	Sel     *SelectStmt
}

type SelectItem struct {
	Star     bool
	StarQual string
	Expr     Expr
	Alias    string
}

type OrderItem struct {
	Expr Expr
	Desc bool
}

type TableRef interface{ tableNode() }

// TableName is a (possibly multi-part) table or view name in FROM.
type TableName struct {
	Parts     []string // e.g. ["QueryReplayDemo","dbo","Orders"], or ["#t"], or ["@t"]
	Alias     string
	IndexHint string // WITH (INDEX(name)) or INDEX(n)
	Hints     []string
}

// TableFunc is a table-valued function call in FROM, e.g. fn_dblog(NULL, NULL).
type TableFunc struct {
	Parts []string
	Args  []Expr
	Alias string
	Bulk  string // OPENROWSET(BULK path, SINGLE_BLOB): the format option
}

type JoinRef struct {
	Left, Right TableRef
	Kind        string // INNER, LEFT, RIGHT, FULL, CROSS, APPLY, OUTER APPLY
	On          Expr
	Hint        string // INNER LOOP/HASH/MERGE JOIN
}

type DerivedTable struct {
	Sel     *SelectStmt
	Values  [][]Expr // (VALUES (…), (…)) AS alias(col, …) when Sel is nil
	Alias   string
	Columns []string
}

func (*TableName) tableNode()    {}
func (*TableFunc) tableNode()    {}
func (*JoinRef) tableNode()      {}
func (*DerivedTable) tableNode() {}

type InsertStmt struct {
	Table   []string
	Columns []string
	Rows    [][]Expr
	Sel     *SelectStmt // INSERT … SELECT
}

type setClause struct {
	Column string
	Expr   Expr
}

type UpdateStmt struct {
	Top   Expr
	Table []string
	Sets  []setClause
	From  TableRef // UPDATE … FROM: Table names the target or an alias in From
	Where Expr
	Opts  QueryOptions
}

type DeleteStmt struct {
	Top   Expr
	Table []string
	From  TableRef
	Where Expr
	Opts  QueryOptions
}

// MergeStmt is MERGE target USING source ON cond WHEN … THEN ….
type MergeStmt struct {
	Target  []string
	Alias   string
	Source  TableRef
	On      Expr
	Clauses []MergeClause
}

type MergeClause struct {
	Matched  bool   // WHEN MATCHED
	BySource bool   // WHEN NOT MATCHED BY SOURCE
	Cond     Expr   // AND …
	Action   string // UPDATE, DELETE, INSERT
	Sets     []setClause
	Columns  []string
	Values   []Expr
}

// ColumnDef is a column of CREATE TABLE or DECLARE @t TABLE.
type ColumnDef struct {
	Name       string
	Type       SQLType
	NotNull    bool
	PrimaryKey bool
	Identity   bool
	Default    Expr
}

type CreateTableStmt struct {
	Name    []string
	Columns []ColumnDef
	PK      []string // table-level PRIMARY KEY (…)
}

type DropTableStmt struct {
	Names    [][]string
	IfExists bool
}

type TruncateStmt struct{ Table []string }

type BeginTranStmt struct{ Name string }
type CommitStmt struct{ Name string }
type RollbackStmt struct{ Name string }
type IfStmt struct {
	Cond       Expr
	Then, Else Stmt
}
type BlockStmt struct{ Stmts []Stmt }

// WhileStmt is WHILE cond statement; LoopControlStmt is BREAK or CONTINUE.
type WhileStmt struct {
	Cond Expr
	Body Stmt
}
type LoopControlStmt struct{ Break bool }
type SetOptionStmt struct {
	Options []string
	Value   string
}
type SetVarStmt struct {
	Var  string
	Expr Expr
}
type declareVar struct {
	Name  string
	Type  SQLType
	Init  Expr
	Table *CreateTableStmt // DECLARE @t TABLE (…)
}
type DeclareStmt struct{ Vars []declareVar }
type CheckpointStmt struct{}
type DBCCStmt struct {
	Command string
	Args    []Expr
	With    []string
}
type UseStmt struct{ DB string }
type WaitforStmt struct{ Delay string }
type ExecStmt struct {
	Proc   []string
	Args   []Expr    // the values, in order (nil for DEFAULT)
	Named  []ExecArg // the same arguments with their names and OUTPUT
	Status string    // EXEC @status = proc
}
type PrintStmt struct{ Expr Expr }

// Extended Events DDL.

type XEEventSpec struct {
	Package, Name string
	Settings      []XESetting
	Actions       []XEName
	Predicate     XEPred // nil when there is no WHERE
	PredicateText string
	// PredicateChars is the predicate's length as written, WHERE
	// excluded (the 3,000-character limit applies to it).
	PredicateChars int
}

type XEName struct{ Package, Name string }

type XESetting struct {
	Name  string
	Value any // int64 or string
}

type XETargetSpec struct {
	Package, Name string
	Settings      []XESetting
}

type XEOption struct {
	Name  string
	Value string // normalised text, e.g. "4096 KB", "30 SECONDS", "ON"
	Num   int64
}

type CreateEventSessionStmt struct {
	Name     string
	Database bool // ON DATABASE instead of ON SERVER
	Events   []XEEventSpec
	Targets  []XETargetSpec
	Options  []XEOption
}

type AlterEventSessionStmt struct {
	Name        string
	Database    bool
	State       string // START, STOP or ""
	AddEvents   []XEEventSpec
	DropEvents  []XEName
	AddTargets  []XETargetSpec
	DropTargets []XEName
	Options     []XEOption
}

type DropEventSessionStmt struct {
	Name     string
	Database bool
}

func (*SelectStmt) stmtNode()             {}
func (*InsertStmt) stmtNode()             {}
func (*UpdateStmt) stmtNode()             {}
func (*DeleteStmt) stmtNode()             {}
func (*BeginTranStmt) stmtNode()          {}
func (*CommitStmt) stmtNode()             {}
func (*RollbackStmt) stmtNode()           {}
func (*IfStmt) stmtNode()                 {}
func (*BlockStmt) stmtNode()              {}
func (*SetOptionStmt) stmtNode()          {}
func (*SetVarStmt) stmtNode()             {}
func (*DeclareStmt) stmtNode()            {}
func (*CheckpointStmt) stmtNode()         {}
func (*DBCCStmt) stmtNode()               {}
func (*UseStmt) stmtNode()                {}
func (*WaitforStmt) stmtNode()            {}
func (*ExecStmt) stmtNode()               {}
func (*PrintStmt) stmtNode()              {}
func (*MergeStmt) stmtNode()              {}
func (*WhileStmt) stmtNode()              {}
func (*LoopControlStmt) stmtNode()        {}
func (*CreateTableStmt) stmtNode()        {}
func (*DropTableStmt) stmtNode()          {}
func (*TruncateStmt) stmtNode()           {}
func (*CreateEventSessionStmt) stmtNode() {}
func (*AlterEventSessionStmt) stmtNode()  {}
func (*DropEventSessionStmt) stmtNode()   {}

// Expressions.

type Expr interface{ exprNode() }

type Literal struct{ V any }
type VarRef struct{ Name string }
type ColRef struct{ Parts []string }
type PseudoCol struct {
	Name string // %%lockres%% or %%physloc%%
	Qual string
}
type FuncCall struct {
	Name     string // upper case, schema-qualified names joined with '.'
	Args     []Expr
	Star     bool
	Distinct bool
	Within   []OrderItem // STRING_AGG … WITHIN GROUP (ORDER BY …)
}

// WindowExpr is a function with an OVER clause.
type WindowExpr struct {
	F           *FuncCall
	PartitionBy []Expr
	OrderBy     []OrderItem
	Frame       *windowFrame // nil: the default frame
}

// windowFrame is ROWS|RANGE BETWEEN start AND end.
type windowFrame struct {
	Rows       bool
	Start, End FrameBound
}

// FrameBound is UNBOUNDED PRECEDING (Kind -2), n PRECEDING (-1), CURRENT
// ROW (0), n FOLLOWING (1) or UNBOUNDED FOLLOWING (2).
type FrameBound struct {
	Kind int
	N    int64
}
type CastExpr struct {
	E     Expr
	T     SQLType
	Try   bool // TRY_CAST / TRY_CONVERT: NULL instead of a conversion error
	Style Expr // CONVERT's style, nil when absent
}
type UnaryExpr struct {
	Op string
	E  Expr
}
type BinaryExpr struct {
	Op   string
	L, R Expr
}
type IsNullExpr struct {
	E   Expr
	Not bool
}
type InExpr struct {
	E    Expr
	List []Expr
	Sub  *SelectStmt
	Not  bool
}
type LikeExpr struct {
	E, Pattern Expr
	Not        bool
	Escape     Expr
}
type BetweenExpr struct {
	E, Lo, Hi Expr
	Not       bool
}
type whenClause struct{ Cond, Result Expr }
type CaseExpr struct {
	Operand Expr
	Whens   []whenClause
	Else    Expr
}
type SubqueryExpr struct{ Sel *SelectStmt }

// QuantifiedExpr is expr op ANY|SOME|ALL (subquery).
type QuantifiedExpr struct {
	E   Expr
	Op  string
	All bool
	Sel *SelectStmt
}
type ExistsExpr struct{ Sel *SelectStmt }

func (*Literal) exprNode()        {}
func (*VarRef) exprNode()         {}
func (*ColRef) exprNode()         {}
func (*PseudoCol) exprNode()      {}
func (*FuncCall) exprNode()       {}
func (*CastExpr) exprNode()       {}
func (*UnaryExpr) exprNode()      {}
func (*BinaryExpr) exprNode()     {}
func (*IsNullExpr) exprNode()     {}
func (*InExpr) exprNode()         {}
func (*LikeExpr) exprNode()       {}
func (*BetweenExpr) exprNode()    {}
func (*CaseExpr) exprNode()       {}
func (*SubqueryExpr) exprNode()   {}
func (*ExistsExpr) exprNode()     {}
func (*WindowExpr) exprNode()     {}
func (*QuantifiedExpr) exprNode() {}

// XE predicates.

type XEPred interface{ predNode() }

type XEPredAnd struct{ L, R XEPred }
type XEPredOr struct{ L, R XEPred }
type XEPredNot struct{ P XEPred }

// XEPredLeaf compares a source (an event field, or a package-qualified
// predicate source such as sqlserver.session_id) with a constant.
type XEPredLeaf struct {
	Source     XEName // Package empty for an event field
	Op         string // =, <>, >, >=, <, <=, LIKE, NOT LIKE
	Value      any    // int64 or string
	Comparator string // package0.greater_than_uint64 etc. when written as a function
}

func (*XEPredAnd) predNode()  {}
func (*XEPredOr) predNode()   {}
func (*XEPredNot) predNode()  {}
func (*XEPredLeaf) predNode() {}
