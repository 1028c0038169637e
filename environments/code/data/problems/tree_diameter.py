TITLE = "Longest Cable"
DIFFICULTY = "medium"
TAGS = ["graphs", "trees", "bfs/dfs"]
STATEMENT = """
A tree has n nodes and n-1 weighted edges. Print the largest distance between any two nodes
(the weighted diameter).

Input: the first line contains n; each of the next n-1 lines contains u, v and a weight w.
Output: one integer.
Constraints: 1 <= n <= 5000, 1 <= w <= 10^4.
"""
PUBLIC = ["4\n1 2 3\n2 3 4\n3 4 5\n", "3\n1 2 1\n2 3 1\n"]


def hidden(rng):
    def tree(n, wmax):
        rows = [f"{rng.randint(1, i - 1)} {i} {rng.randint(1, wmax)}" for i in range(2, n + 1)]
        rng.shuffle(rows)
        return f"{n}\n" + "".join(r + "\n" for r in rows)
    tests = ["1\n", "2\n1 2 7\n", "4\n1 2 1\n2 3 5\n2 4 5\n", "5\n1 2 10\n1 3 1\n3 4 1\n4 5 1\n",
             "4\n3 1 2\n3 2 2\n3 4 100\n", tree(10, 10), tree(100, 100), tree(1000, 10**4), tree(3000, 3)]
    return tests + [tree(5000, 10**4)]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n = d[0]
adj = [[] for _ in range(n + 1)]
for i in range(n - 1):
    u, v, w = d[1 + 3 * i: 4 + 3 * i]
    adj[u].append((v, w))
    adj[v].append((u, w))
def far(s):
    dist = [-1] * (n + 1)
    dist[s] = 0
    stack = [s]
    while stack:
        u = stack.pop()
        for v, w in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + w
                stack.append(v)
    best = max(range(1, n + 1), key=lambda x: dist[x])
    return best, dist[best]
a, _ = far(1)
print(far(a)[1])
'''
REF_CPP = r'''
#include <cstdio>
#include <utility>
#include <vector>
int n; std::vector<std::vector<std::pair<int, long long>>> adj;
std::pair<int, long long> far(int s) {
    std::vector<long long> dist(n + 1, -1); dist[s] = 0;
    std::vector<int> st = {s};
    while (!st.empty()) {
        int u = st.back(); st.pop_back();
        for (auto [v, w] : adj[u]) if (dist[v] < 0) { dist[v] = dist[u] + w; st.push_back(v); }
    }
    int best = 1;
    for (int v = 1; v <= n; v++) if (dist[v] > dist[best]) best = v;
    return {best, dist[best]};
}
int main() {
    scanf("%d", &n); adj.resize(n + 1);
    for (int i = 0; i < n - 1; i++) { int u, v; long long w; scanf("%d %d %lld", &u, &v, &w); adj[u].push_back({v, w}); adj[v].push_back({u, w}); }
    printf("%lld\n", far(far(1).first).second);
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n = d[0]
adj = [[] for _ in range(n + 1)]
for i in range(n - 1):
    u, v, w = d[1 + 3 * i: 4 + 3 * i]
    adj[u].append((v, w))
    adj[v].append((u, w))
dist = [-1] * (n + 1)
dist[1] = 0
stack = [1]
while stack:
    u = stack.pop()
    for v, w in adj[u]:
        if dist[v] < 0:
            dist[v] = dist[u] + w
            stack.append(v)
print(max(dist))
'''
