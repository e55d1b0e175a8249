// C++ fixture for pkg/pdb tests: classes, namespaces, templates, operators,
// virtual destructors, an anonymous namespace, static functions and a second
// code section. Built by the tests with clang --target=x86_64-pc-windows-msvc
// and lld-link /dll /debug; nothing here is executed.

void operator delete(void *) noexcept {}
void operator delete(void *, unsigned long long) noexcept {}

namespace sql {
class CStmtQuery {
public:
  CStmtQuery();
  virtual ~CStmtQuery();
  int ErsqExecuteQuery(int x);
  CStmtQuery &operator=(const CStmtQuery &o);
  bool operator==(const CStmtQuery &o) const;
  bool operator!=(const CStmtQuery &o) const;
  bool operator<(const CStmtQuery &o) const;
  int operator()(int a) const;
  int operator[](int i) const;
  CStmtQuery &operator+=(int d);
  CStmtQuery &operator++();
  operator int() const;
  operator const char *() const;
  static int Create(const char *text, unsigned long long flags);
  int v;
};
CStmtQuery::CStmtQuery() : v(1) {}
CStmtQuery::~CStmtQuery() {}
int CStmtQuery::ErsqExecuteQuery(int x) { return x + v; }
CStmtQuery &CStmtQuery::operator=(const CStmtQuery &o) { v = o.v; return *this; }
bool CStmtQuery::operator==(const CStmtQuery &o) const { return v == o.v; }
bool CStmtQuery::operator!=(const CStmtQuery &o) const { return v != o.v; }
bool CStmtQuery::operator<(const CStmtQuery &o) const { return v < o.v; }
int CStmtQuery::operator()(int a) const { return a * v; }
int CStmtQuery::operator[](int i) const { return i - v; }
CStmtQuery &CStmtQuery::operator+=(int d) { v += d; return *this; }
CStmtQuery &CStmtQuery::operator++() { ++v; return *this; }
CStmtQuery::operator int() const { return v; }
CStmtQuery::operator const char *() const { return "q"; }
int CStmtQuery::Create(const char *text, unsigned long long flags) { return text[0] + (int)flags; }

namespace exec {
struct CQScanNLJoinNew {
  int GetRow(int n);
  int Open();
};
int CQScanNLJoinNew::GetRow(int n) { return n * 3; }
int CQScanNLJoinNew::Open() { return 0; }
} // namespace exec
} // namespace sql

template <int A, int B, int C> struct Spinlock {
  static int SpinToAcquireWithExponentialBackoff(int x) { return x + A + B + C; }
};
template <class T> struct Box {
  T t;
  T get() const { return t; }
  void set(const T &n) { t = n; }
};
template <class K, class V> struct Pair {
  K k;
  V v;
  V second(K) const { return v; }
};
template <class T> class CAutoRefc {
public:
  CAutoRefc(T *p) : p_(p) {}
  ~CAutoRefc() { p_ = 0; }
  T *p_;
};
struct HkStorageInterface { int x; };

template <int N> int Fib() { return Fib<N - 1>() + Fib<N - 2>(); }
template <> int Fib<1>() { return 1; }
template <> int Fib<0>() { return 0; }

namespace {
int AnonHelper(int x) { return x * 7; }
}
static int StaticHelper(int a, int b) { return a * b; }

#pragma code_seg("PAGE")
int PagedRoutine(int x) { return x ^ 0x55; }
namespace sql {
int PagedMember(CStmtQuery *q) { return q->v; }
}
#pragma code_seg()

extern "C" int c_entry(int a);

int UseEverything() {
  sql::CStmtQuery q, r;
  r = q;
  Box<sql::CStmtQuery *> b{&q};
  b.set(&r);
  Box<unsigned long long> c{3};
  Box<Box<int> > bb{};
  Pair<const char *, short> p{"k", 2};
  CAutoRefc<HkStorageInterface> ref(0);
  sql::exec::CQScanNLJoinNew nl;
  ++q;
  q += 2;
  int s = Spinlock<143, 7, 1>::SpinToAcquireWithExponentialBackoff(1) + Spinlock<-1, 0, 10>::SpinToAcquireWithExponentialBackoff(2);
  s += b.get()->ErsqExecuteQuery(2) + (int)c.get() + bb.get().get() + p.second("x");
  s += AnonHelper(3) + StaticHelper(2, 3) + (q == r) + (q != r) + (q < r) + q(4) + q[1] + (int)q;
  s += ((const char *)q)[0] + sql::CStmtQuery::Create("x", 1) + nl.GetRow(2) + nl.Open() + Fib<5>();
  s += PagedRoutine(s) + sql::PagedMember(&q) + c_entry(s);
  return s;
}
