TITLE = "Cheapest Routes"
DIFFICULTY = "medium"
TAGS = ["graphs", "shortest paths"]
STATEMENT = """
A road network has n towns and m one-way roads; road i goes from u_i to v_i and costs w_i.
There may be several roads between the same pair of towns. Print the cheapest cost from town
1 to every town, or -1 for towns that cannot be reached.

Input: the first line contains n and m; each of the next m lines contains u, v and w.
Output: n integers separated by spaces (the first is 0).
Constraints: 1 <= n <= 2000, 0 <= m <= 5000, 1 <= w <= 10^6.
"""
PUBLIC = ["4 4\n1 2 5\n2 3 1\n1 3 10\n3 4 2\n", "3 1\n2 3 4\n"]


def hidden(rng):
    def graph(n, m, wmax, multi):
        edges = []
        for _ in range(m):
            u, v = rng.randint(1, n), rng.randint(1, n)
            edges.append((u, v, rng.randint(1, wmax)))
            if multi and rng.random() < 0.3:
                edges.append((u, v, rng.randint(1, wmax)))
        return f"{n} {len(edges)}\n" + "".join(f"{u} {v} {w}\n" for u, v, w in edges)
    tests = ["1 0\n", "2 2\n1 2 5\n1 2 3\n", "2 1\n2 1 1\n", "3 3\n1 2 1\n2 1 1\n1 3 1000000\n",
             "3 3\n1 3 10\n1 3 2\n1 3 7\n", graph(10, 20, 10, True), graph(100, 300, 100, True),
             graph(1000, 3000, 10**6, True), graph(500, 200, 10, False)]
    return tests + [graph(2000, 3800, 10**6, True)]


REF_PY = r'''
import sys, heapq
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v, w = d[2 + 3 * i: 5 + 3 * i]
    adj[u].append((v, w))
INF = float("inf")
dist = [INF] * (n + 1)
dist[1] = 0
heap = [(0, 1)]
while heap:
    du, u = heapq.heappop(heap)
    if du > dist[u]:
        continue
    for v, w in adj[u]:
        if du + w < dist[v]:
            dist[v] = du + w
            heapq.heappush(heap, (dist[v], v))
print(" ".join(str(x) if x < INF else "-1" for x in dist[1:]))
'''
REF_CPP = r'''
#include <cstdio>
#include <functional>
#include <queue>
#include <vector>
typedef long long ll;
int main() {
    int n, m; scanf("%d %d", &n, &m);
    std::vector<std::vector<std::pair<int, ll>>> adj(n + 1);
    for (int i = 0; i < m; i++) { int u, v; ll w; scanf("%d %d %lld", &u, &v, &w); adj[u].push_back({v, w}); }
    std::vector<ll> dist(n + 1, -1); dist[1] = 0;
    std::priority_queue<std::pair<ll, int>, std::vector<std::pair<ll, int>>, std::greater<>> pq; pq.push({0, 1});
    while (!pq.empty()) {
        auto [du, u] = pq.top(); pq.pop();
        if (du > dist[u]) continue;
        for (auto [v, w] : adj[u]) if (dist[v] < 0 || du + w < dist[v]) { dist[v] = du + w; pq.push({dist[v], v}); }
    }
    for (int v = 1; v <= n; v++) printf("%lld%c", dist[v], v == n ? '\n' : ' ');
}
'''
WRONG_PY = r'''
import sys, heapq
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [dict() for _ in range(n + 1)]
for i in range(m):
    u, v, w = d[2 + 3 * i: 5 + 3 * i]
    adj[u][v] = w
INF = float("inf")
dist = [INF] * (n + 1)
dist[1] = 0
heap = [(0, 1)]
while heap:
    du, u = heapq.heappop(heap)
    if du > dist[u]:
        continue
    for v, w in adj[u].items():
        if du + w < dist[v]:
            dist[v] = du + w
            heapq.heappush(heap, (dist[v], v))
print(" ".join(str(x) if x < INF else "-1" for x in dist[1:]))
'''
