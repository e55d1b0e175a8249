package pdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

// writeNestedSource writes C++ whose symbols carry nested names: function
// local statics (?x@?1??f@@…@4HA), lambdas (<lambda_N>) and their call
// operators, generic lambdas (templated operator()), lambdas passed to
// templates, statics inside lambdas and templates, pointers to members of
// classes with multiple and virtual inheritance as template arguments
// ($H, $I), pointers to data and functions ($1), constructors, destructors
// and operators holding statics. Every block is repeated with its own
// names, so the test sees thousands of symbols.
func writeNestedSource(path string, blocks int) error {
	var b strings.Builder
	b.WriteString(`struct B1 { virtual int f(); int x; };
struct B2 { virtual int g(); int y; };
int B1::f() { return 1; }
int B2::g() { return 2; }
template <typename T> struct Box { T v; template <typename F> static int run(F f) { static int n; return f(n++); } };
`)
	for i := range blocks {
		fmt.Fprintf(&b, `namespace ns%[1]d { inline namespace v%[1]d {
struct M%[1]d : B1, B2 { int m(int a); virtual int f(); int d; M%[1]d(); ~M%[1]d(); M%[1]d &operator+=(const M%[1]d &o); operator bool() const; };
struct V%[1]d : virtual B1 { int v(); int w; };
int M%[1]d::m(int a) { static int calls; auto add = [a](int y) { static int seen; return a + y + seen++; }; return add(calls++); }
int M%[1]d::f() { static const char *name = "f"; return name[0]; }
M%[1]d::M%[1]d() { static int made; made++; }
M%[1]d::~M%[1]d() { static int gone; gone++; }
M%[1]d &M%[1]d::operator+=(const M%[1]d &o) { static int adds; adds++; d += o.d; return *this; }
M%[1]d::operator bool() const { static bool once = true; return once; }
int V%[1]d::v() { return w; }
template <int (M%[1]d::*P)(int)> int callm(M%[1]d *x) { static int k; return (x->*P)(k++); }
template <int (V%[1]d::*P)()> int callv(V%[1]d *x) { return (x->*P)(); }
template <int M%[1]d::*P> int field(M%[1]d *x) { static int reads; reads++; return x->*P; }
int g%[1]d = %[1]d;
template <int *P> int deref() { static int uses; return *P + uses++; }
template <typename F> int apply(F f, int x) { static int applied; return f(x) + applied++; }
int gen%[1]d(int x) {
  static int a; { static int b; a += b; }
  auto sq = [](int v) { return v * v; };
  auto any = [x](auto v) { static int inner; return (int)v + x + inner++; };
  auto outer = [&](int v) { auto in = [v](long w) { static long deep; return (int)(v + w + deep++); }; return in(v); };
  return apply(sq, x) + apply([x](int v) { return v - x; }, 2) + any(1) + any('c') + any(2.0) + any(3L) + outer(4)
    + Box<char>::run([](int n) { return n; }) + Box<M%[1]d *>::run([x](int n) { return n + x; }) + deref<&g%[1]d>();
}
int use%[1]d(M%[1]d *m, V%[1]d *v) { return callm<&M%[1]d::m>(m) + callv<&V%[1]d::v>(v) + field<&M%[1]d::d>(m); }
} }
`, i)
	}
	b.WriteString("extern \"C\" int _DllMainCRTStartup(void *h, unsigned long r, void *p) { return 1; }\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// TestUndecorateNestedAgainstLLVMUndname compiles the generated C++ with
// clang for x86_64-pc-windows-msvc, takes every decorated symbol of the
// object (llvm-nm) and compares Undecorate with llvm-undname: the outer
// name in name-only form, every nested symbol inside `…' exactly as
// llvm-undname prints it (modulo class/struct keywords and spaces).
func TestUndecorateNestedAgainstLLVMUndname(t *testing.T) {
	tools := pdbtest.Require(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "nested.cpp")
	if err := writeNestedSource(src, 60); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "nested.obj")
	ctx := context.Background()
	if _, err := pdbtest.Output(ctx, tools.Clang, "--target=x86_64-pc-windows-msvc", "-std=c++17", "-O0", "-w", "-c", src, "-o", obj); err != nil {
		t.Fatal(err)
	}
	nm, err := pdbtest.Output(ctx, tools.NM, "--just-symbol-name", obj)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range strings.Fields(nm) {
		if strings.HasPrefix(n, "?") && !strings.HasPrefix(n, "??_C@") && !strings.HasPrefix(n, "??_7") && !strings.HasPrefix(n, "??_R") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	nested := 0
	for _, n := range names {
		if strings.Contains(n, "@?") {
			nested++
		}
	}
	if len(names) < 2000 || nested < 1000 {
		t.Fatalf("%d names, %d with nested parts; the generator should give thousands", len(names), nested)
	}
	compareWithUndname(t, tools, names)
}

// compareWithUndname runs llvm-undname on names and checks Undecorate
// against the name-only reduction of each answer.
func compareWithUndname(t *testing.T, tools pdbtest.Tools, names []string) {
	t.Helper()
	out, err := pdbtest.OutputWithInput(context.Background(), strings.Join(names, "\n")+"\n", tools.Undname)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(blocks) != len(names) {
		t.Fatalf("llvm-undname answered %d of %d names", len(blocks), len(names))
	}
	bad := 0
	for i, b := range blocks {
		lines := strings.SplitN(b, "\n", 2)
		if len(lines) != 2 || lines[0] != names[i] {
			t.Fatalf("unexpected llvm-undname block %q", b)
		}
		if strings.HasPrefix(lines[1], "error:") || strings.Contains(lines[1], "Invalid mangled name") {
			continue // llvm-undname cannot read it either
		}
		want := normalizeName(nameOnly(lines[1]))
		if got := Undecorate(names[i]); normalizeName(got) != want {
			if bad++; bad <= 15 {
				t.Errorf("Undecorate(%s)\n got %q\nwant %q (llvm-undname %q)", names[i], got, nameOnly(lines[1]), lines[1])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d names differ from llvm-undname", bad, len(names))
	}
}
