/* cbfs.c - the physical-limit reference for `make bench`: a compiled BFS over the store's CSR arrays.
 *
 * It does the same work as lineage_cli.walk.traverse.bfs and hands back the same answer: every node
 * reached with its hop count, and every edge kept by the edge-type mask (the node it was followed from,
 * the node it leads to, its packed type+subtypes).  A plain FIFO queue: hop counts never decrease along
 * it, so stopping the expansion at `max_hops` gives the same walk as a frontier-at-a-time BFS.
 *
 * Like the Python walk it reads the part of each slice its mask needs (format v3: a slice's table-level
 * edges come first, `split[node]` of them): part 0 the whole slice, 1 the table-level head, 2 the rest.
 *
 * Built by bench/graph.py with the C compiler when one is present and loaded through ctypes.
 */
#include <stdint.h>
#include <stdlib.h>

/* Returns the number of nodes reached (written to nodes/hops, capacity node_count), or -1 when out of
 * memory.  Kept edges go to origins/targets/kinds in walk order (capacity: the array's edge count).
 * `follow_all` skips the type check when the mask holds every edge type of the part read, as the Python
 * walk does. */
int64_t cbfs(const int64_t *offsets, const int32_t *split, const int32_t *neighbours, const uint16_t *attributes,
             int64_t node_count, const int32_t *starts, int64_t start_count, uint32_t mask, int32_t part,
             int32_t follow_all, int64_t max_hops, int32_t *nodes, int32_t *hops, int32_t *origins, int32_t *targets,
             uint16_t *kinds, int64_t *edge_count) {
    uint8_t *seen = calloc((size_t)node_count, 1);
    if (!seen) return -1;
    int64_t head = 0, tail = 0, kept = 0;
    for (int64_t i = 0; i < start_count; i++) {
        int32_t start = starts[i];
        if (!seen[start]) {
            seen[start] = 1;
            nodes[tail] = start;
            hops[tail++] = 0;
        }
    }
    while (head < tail) {
        int32_t node = nodes[head];
        int32_t hop = hops[head++];
        if (max_hops >= 0 && hop >= max_hops) continue;
        int64_t e = offsets[node], end = offsets[node + 1];
        if (part == 1)
            end = e + split[node];
        else if (part == 2)
            e += split[node];
        for (; e < end; e++) {
            uint16_t attribute = attributes[e];
            if (!follow_all && !((mask >> (attribute & 15u)) & 1u)) continue;
            int32_t next = neighbours[e];
            origins[kept] = node;
            targets[kept] = next;
            kinds[kept++] = attribute;
            if (!seen[next]) {
                seen[next] = 1;
                nodes[tail] = next;
                hops[tail++] = hop + 1;
            }
        }
    }
    free(seen);
    *edge_count = kept;
    return tail;
}
