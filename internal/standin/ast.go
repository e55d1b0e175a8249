package standin

// Statements produced by the parser. Each shape here is one the stand-in
// executes; anything else is refused by the parser with Msg 102/156.

type stmt interface{ stmtNode() }

// selectStmt is a query expression: a query specification (Op == "") or a
// set operation of Left and Right (UNION/INTERSECT/EXCEPT). ORDER BY,
// OFFSET/FETCH, OPTION and WITH (CTEs) belong to the outermost one.
type selectStmt struct {
	With []*cteDef

	Op          string // "", "UNION", "INTERSECT", "EXCEPT"
	All         bool
	Left, Right *selectStmt

	Distinct     bool
	Top          expr
	TopPercent   bool
	WithTies     bool
	Items        []selectItem
	Into         []string // SELECT … INTO name
	From         tableRef // nil when there is no FROM
	Where        expr
	GroupBy      []expr  // the distinct grouping expressions
	GroupingSets [][]int // ROLLUP/CUBE/GROUPING SETS: each set lists GroupBy positions; nil = one set of all
	GroupKind    string  // "", "ROLLUP", "CUBE", "GROUPING SETS"
	Having       expr
	OrderBy      []orderItem
	Offset       expr
	Fetch        expr
	Opts         queryOptions
	MaxDOP       int // OPTION (MAXDOP n); 0 when absent
}

// queryOptions are the OPTION (…) query hints the stand-in honours
// (https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-query).
type queryOptions struct {
	MaxDOP       int
	MaxRecursion int    // -1: not given (default 100)
	Join         string // LOOP, HASH or MERGE JOIN forced for every join
	MinGrant     float64
	MaxGrant     float64 // 0: not given
	Recompile    bool
	ForceOrder   bool
}

// cteDef is one common table expression of a WITH clause.
type cteDef struct {
	Name    string
	Columns []string
	Sel     *selectStmt
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
	Parts     []string // e.g. ["QueryReplayDemo","dbo","Orders"], or ["#t"], or ["@t"]
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
	Kind        string // INNER, LEFT, RIGHT, FULL, CROSS, APPLY, OUTER APPLY
	On          expr
	Hint        string // INNER LOOP/HASH/MERGE JOIN
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
	Sel     *selectStmt // INSERT … SELECT
}

type setClause struct {
	Column string
	Expr   expr
}

type updateStmt struct {
	Top   expr
	Table []string
	Sets  []setClause
	From  tableRef // UPDATE … FROM: Table names the target or an alias in From
	Where expr
	Opts  queryOptions
}

type deleteStmt struct {
	Top   expr
	Table []string
	From  tableRef
	Where expr
	Opts  queryOptions
}

// mergeStmt is MERGE target USING source ON cond WHEN … THEN ….
type mergeStmt struct {
	Target  []string
	Alias   string
	Source  tableRef
	On      expr
	Clauses []mergeClause
}

type mergeClause struct {
	Matched  bool   // WHEN MATCHED
	BySource bool   // WHEN NOT MATCHED BY SOURCE
	Cond     expr   // AND …
	Action   string // UPDATE, DELETE, INSERT
	Sets     []setClause
	Columns  []string
	Values   []expr
}

// columnDef is a column of CREATE TABLE or DECLARE @t TABLE.
type columnDef struct {
	Name       string
	Type       SQLType
	NotNull    bool
	PrimaryKey bool
	Identity   bool
	Default    expr
}

type createTableStmt struct {
	Name    []string
	Columns []columnDef
	PK      []string // table-level PRIMARY KEY (…)
}

type dropTableStmt struct {
	Names    [][]string
	IfExists bool
}

type truncateStmt struct{ Table []string }

type beginTranStmt struct{ Name string }
type commitStmt struct{ Name string }
type rollbackStmt struct{ Name string }
type ifStmt struct {
	Cond       expr
	Then, Else stmt
}
type blockStmt struct{ Stmts []stmt }

// whileStmt is WHILE cond statement; loopControlStmt is BREAK or CONTINUE.
type whileStmt struct {
	Cond expr
	Body stmt
}
type loopControlStmt struct{ Break bool }
type setOptionStmt struct {
	Options []string
	Value   string
}
type setVarStmt struct {
	Var  string
	Expr expr
}
type declareVar struct {
	Name  string
	Type  SQLType
	Init  expr
	Table *createTableStmt // DECLARE @t TABLE (…)
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
func (*mergeStmt) stmtNode()              {}
func (*whileStmt) stmtNode()              {}
func (*loopControlStmt) stmtNode()        {}
func (*createTableStmt) stmtNode()        {}
func (*dropTableStmt) stmtNode()          {}
func (*truncateStmt) stmtNode()           {}
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
	Within   []orderItem // STRING_AGG … WITHIN GROUP (ORDER BY …)
}

// windowExpr is a function with an OVER clause.
type windowExpr struct {
	F           *funcCall
	PartitionBy []expr
	OrderBy     []orderItem
	Frame       *windowFrame // nil: the default frame
}

// windowFrame is ROWS|RANGE BETWEEN start AND end.
type windowFrame struct {
	Rows       bool
	Start, End frameBound
}

// frameBound is UNBOUNDED PRECEDING (Kind -2), n PRECEDING (-1), CURRENT
// ROW (0), n FOLLOWING (1) or UNBOUNDED FOLLOWING (2).
type frameBound struct {
	Kind int
	N    int64
}
type castExpr struct {
	E     expr
	T     SQLType
	Try   bool // TRY_CAST / TRY_CONVERT: NULL instead of a conversion error
	Style expr // CONVERT's style, nil when absent
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
	Escape     expr
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

// quantifiedExpr is expr op ANY|SOME|ALL (subquery).
type quantifiedExpr struct {
	E   expr
	Op  string
	All bool
	Sel *selectStmt
}
type existsExpr struct{ Sel *selectStmt }

func (*literal) exprNode()        {}
func (*varRef) exprNode()         {}
func (*colRef) exprNode()         {}
func (*pseudoCol) exprNode()      {}
func (*funcCall) exprNode()       {}
func (*castExpr) exprNode()       {}
func (*unaryExpr) exprNode()      {}
func (*binaryExpr) exprNode()     {}
func (*isNullExpr) exprNode()     {}
func (*inExpr) exprNode()         {}
func (*likeExpr) exprNode()       {}
func (*betweenExpr) exprNode()    {}
func (*caseExpr) exprNode()       {}
func (*subqueryExpr) exprNode()   {}
func (*existsExpr) exprNode()     {}
func (*windowExpr) exprNode()     {}
func (*quantifiedExpr) exprNode() {}

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
