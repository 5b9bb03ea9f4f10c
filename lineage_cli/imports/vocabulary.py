"""The distinct names of an edge-list import, interned with numpy: one UTF-8 blob, not a ``str`` per name.

A dict from name to node is the obvious interning, but at millions of names it costs over a hundred bytes
a name and most of an import's time.  ``Vocabulary`` keeps each distinct name once, as bytes in a blob
numbered in order of first occurrence, and finds a chunk of names at once by a 64-bit hash of their bytes in
an open-addressing table of nodes (linear probing, vectorised: a round per probe).  A hash is never
trusted alone: every name found by its hash is compared byte for byte with the name it found, and the names
whose hash is taken by another name (a collision, made on purpose or by chance) are kept in a small dict.
``order`` sorts the names by their bytes (UTF-8 byte order is code-point order) 8 bytes at a time.
"""

from __future__ import annotations

import numpy as np

_SEED = np.uint64(0xCBF29CE484222325)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers with bits all over
_PRIME = np.uint64(0xC2B2AE3D27D4EB4F)
_FINISH = np.uint64(0xFF51AFD7ED558CCD)


class Vocabulary:
    """Distinct names in order of first occurrence: node ``i`` is the ``i``-th new name ``intern`` met."""

    def __init__(self) -> None:
        self._blob = np.zeros(1 << 16, dtype=np.uint8)  # the names' bytes, and at least 8 spare bytes
        self._size = 0  # bytes used in ``_blob``
        self._starts = np.zeros(1 << 12, dtype=np.int64)  # per node: where its name starts (then its end)
        self.count = 0
        self._hashes = np.zeros(1 << 12, dtype=np.uint64)  # per node: its name's hash
        self._slots = np.full(1 << 12, -1, dtype=np.int32)  # the table: a node per slot, -1 free; at most half full
        self._held = 0  # nodes in the table
        self._collided: dict[bytes, int] = {}  # names whose hash an earlier name holds

    def intern(self, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The node of each name, and the positions in ``names`` of the first occurrences of the new ones."""
        blob, starts, lengths = _packed(names)
        hashes = _hashes(blob, starts, lengths)
        distinct, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        found = self._find(distinct)
        known = found >= 0
        same = _equal(blob, starts[first], lengths[first], self._blob, self._start_of(found), self._length_of(found))
        inverse = inverse.reshape(-1)
        alike = _equal(blob, starts, lengths, blob, starts[first][inverse], lengths[first][inverse])
        if not alike.all() or not (same | ~known).all():  # a hash two names share
            return self._intern_one_by_one(names, hashes)
        new = np.flatnonzero(~known)
        new = new[np.argsort(first[new], kind="stable")]  # numbered in order of first occurrence
        found[new] = np.arange(self.count, self.count + new.size)
        self._append(blob, starts[first[new]], lengths[first[new]])
        self._hold(distinct[new], found[new])
        return found[inverse], first[new]

    def _intern_one_by_one(self, names: list[str], hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``intern`` for a chunk where hashes collide: each name looked up on its own, in order."""
        nodes = np.empty(len(names), dtype=np.int64)
        firsts: list[int] = []
        added: dict[int, int] = {}  # hash -> node, for the names this chunk adds
        distinct = np.unique(hashes)
        held = dict(zip(distinct.tolist(), self._find(distinct).tolist(), strict=True))  # hash -> node, -1 none
        for position, (name, code) in enumerate(zip(names, hashes.tolist(), strict=True)):
            data = name.encode()
            node = added.get(code, held[code])
            if node < 0 or self._name_bytes(node) != data:
                node = self._collided.get(data, -1)
            if node < 0:
                node = self.count
                firsts.append(position)
                array = np.frombuffer(data, dtype=np.uint8)
                self._append(array, np.zeros(1, dtype=np.int64), np.array([array.size]))
                if held[code] < 0 and code not in added:
                    added[code] = node
                else:
                    self._collided[data] = node
            nodes[position] = node
        codes = np.fromiter(added.keys(), np.uint64, len(added))
        self._hold(codes, np.fromiter(added.values(), np.int64, len(added)))
        return nodes, np.array(firsts, dtype=np.int64)

    def _find(self, hashes: np.ndarray) -> np.ndarray:
        """The node holding each hash in the table, or -1."""
        found = np.full(hashes.size, -1, dtype=np.int64)
        pending, slot = np.arange(hashes.size), self._slot(hashes)
        while pending.size:
            node = self._slots[slot]
            hit = node >= 0
            going = hit.copy()
            hit[going] = self._hashes[node[going]] == hashes[pending[going]]
            found[pending[hit]] = node[hit]
            going &= ~hit  # a slot holding another hash: probe the next one
            pending, slot = pending[going], (slot[going] + 1) & (self._slots.size - 1)
        return found

    def _hold(self, hashes: np.ndarray, nodes: np.ndarray) -> None:
        """Put ``nodes`` in the table under their (distinct, new) ``hashes``."""
        self._hashes[nodes] = hashes
        self._held += nodes.size
        if 2 * self._held > self._slots.size:  # grown to hold 2 to 4 slots a node
            held = self._slots[self._slots >= 0]
            self._slots = np.full(1 << (2 * self._held).bit_length(), -1, dtype=np.int32)
            self._place(held)
        self._place(nodes)

    def _place(self, nodes: np.ndarray) -> None:
        slot = self._slot(self._hashes[nodes])
        while nodes.size:
            free = self._slots[slot] < 0
            self._slots[slot[free]] = nodes[free]  # of nodes probing the same free slot, one wins it
            placed = free.copy()
            placed[free] = self._slots[slot[free]] == nodes[free]
            nodes, slot = nodes[~placed], (slot[~placed] + 1) & (self._slots.size - 1)

    def _slot(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's first slot: its top bits."""
        return (hashes >> np.uint64(65 - self._slots.size.bit_length())).astype(np.int64)

    def _append(self, blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> None:
        """Add the names at ``starts`` in ``blob`` as the next nodes."""
        total = int(lengths.sum())
        self._blob = _room(self._blob, self._size + total + 8)
        self._starts = _room(self._starts, self.count + lengths.size + 1)
        self._hashes = _room(self._hashes, self.count + lengths.size)
        ends = self._size + np.cumsum(lengths)
        self._starts[self.count + 1 : self.count + 1 + lengths.size] = ends
        self._blob[self._size : self._size + total] = blob[_byte_indices(starts, lengths)]
        self._size += total
        self.count += lengths.size

    def _start_of(self, nodes: np.ndarray) -> np.ndarray:
        return self._starts[np.maximum(nodes, 0)]

    def _length_of(self, nodes: np.ndarray) -> np.ndarray:
        return np.where(nodes >= 0, self._starts[np.maximum(nodes, 0) + 1] - self._start_of(nodes), -1)

    def _name_bytes(self, node: int) -> bytes:
        return self._blob[self._starts[node] : self._starts[node + 1]].tobytes()

    def table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The names sorted by their bytes: their blob, offsets (n + 1) and the node of each, releasing ``self``."""
        del self._hashes, self._slots, self._collided
        # lengths as int32 (no name is 2 GB long): the sort's copies of them, and their masks, take half as much
        starts, lengths = self._starts[: self.count], np.diff(self._starts[: self.count + 1]).astype(np.int32)
        by_rank = order(self._blob, starts, lengths)
        offsets = np.zeros(self.count + 1, dtype="<u8")
        np.cumsum(lengths[by_rank], out=offsets[1:])
        blob = np.empty(self._size, dtype=np.uint8)
        step = 1 << 16  # names copied a block at a time: the byte indices of all of them would cost 8x the blob
        for block in range(0, self.count, step):
            nodes = by_rank[block : block + step]
            blob[offsets[block] : offsets[min(block + step, self.count)]] = self._blob[
                _byte_indices(starts[nodes], lengths[nodes])
            ]
        del self._blob, self._starts
        return blob, offsets, by_rank


def _packed(names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``names`` as one UTF-8 blob (8 spare bytes at its end), with each name's start and length in bytes."""
    joined = "".join(names)
    data = joined.encode()
    lengths = np.fromiter(map(len, names if len(data) == len(joined) else map(str.encode, names)), np.int64, len(names))
    blob = np.zeros(len(data) + 8, dtype=np.uint8)
    blob[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    starts = np.zeros(len(names), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return blob, starts, lengths


def _words(blob: np.ndarray) -> np.ndarray:
    """The big-endian 8-byte word starting at each byte of ``blob`` (whose last 8 bytes start none)."""
    return np.ndarray((blob.size - 7,), dtype=">u8", buffer=blob, strides=(1,))


def _word(
    words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, index: int, names: np.ndarray | None = None
) -> np.ndarray:
    """Word ``index`` of each name (of the names ``names`` picks, when given), the bytes past its end zeroed (a
    name's bytes compare as big-endian words)."""
    at = 8 * index
    if names is None:
        where = starts + at
    else:
        where = starts.take(names)
        where += at
    word = words[where].view(np.uint64)
    word.byteswap(inplace=True)  # the big-endian words' values, without a copy
    # Every word masked by how many of its bytes are the name's (8: all), counted in the positions' buffer: when
    # most names end in this word, gathering them or their counts would cost more int64 temporaries of every name.
    np.subtract(lengths if names is None else lengths.take(names), at, out=where)
    np.clip(where, 0, 8, out=where)
    word &= _KEEP.take(where)
    return word


# per number of a word's bytes that are a name's: the mask keeping them
_KEEP = np.array([~np.uint64(0) << np.uint64(8 * (8 - kept)) if kept else 0 for kept in range(9)], dtype=np.uint64)


def _hashes(blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each name's bytes, 8-byte word by word (each mixed first), with murmur3's finish."""
    words = _words(blob)
    by_length = np.argsort(-lengths, kind="stable")  # the names still going at word i are a prefix
    sorted_starts, sorted_lengths = starts[by_length], lengths[by_length]
    hashes = _SEED ^ sorted_lengths.astype(np.uint64)
    longest = int(sorted_lengths[0]) if sorted_lengths.size else 0
    with np.errstate(over="ignore"):
        for index in range((longest + 7) // 8):
            going = np.count_nonzero(sorted_lengths > 8 * index)
            word = _word(words, sorted_starts[:going], sorted_lengths[:going], index)
            word *= _MIX  # every bit of the word reaches the high bits, before the xor-multiply-rotate of the hash
            word ^= word >> np.uint64(32)
            hashes[:going] ^= word
            hashes[:going] *= _PRIME
            hashes[:going] = hashes[:going] << np.uint64(27) | hashes[:going] >> np.uint64(37)
        hashes ^= hashes >> np.uint64(33)  # murmur3's finish
        hashes *= _FINISH
        hashes ^= hashes >> np.uint64(33)
    out = np.empty_like(hashes)
    out[by_length] = hashes
    return out


def _equal(
    blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray, other: np.ndarray, other_starts: np.ndarray,
    other_lengths: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Whether each name of ``blob`` is the same bytes as the one of ``other`` beside it."""
    same = lengths == other_lengths
    check = np.flatnonzero(same)
    words, other_words = _words(blob), _words(other)
    index = 0
    while check.size:
        length = lengths[check]
        check = check[length > 8 * index]
        length = lengths[check]
        if not check.size:
            break
        mine = _word(words, starts[check], length, index)
        theirs = _word(other_words, other_starts[check], length, index)
        differ = mine != theirs
        same[check[differ]] = False
        check = check[~differ]
        index += 1
    return same


def order(blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The order sorting distinct names by their bytes: a most-significant-word-first radix sort.

    Each round sorts the names still tied (same group, same words so far) by their next word, and by their
    length where it ends within that word: a name that ends there comes before the longer names it begins.
    """
    words = _words(blob)
    ranked = np.arange(starts.size, dtype=np.int32)
    tied = ranked.copy()  # positions in ``ranked`` whose name ties a neighbour's so far
    group: np.ndarray | None = None  # per tied position: where its group starts (None: one group, all of them)
    index = 0
    # The temporaries are int32 and uint8 where they can be, and a round's are let go before the next is made:
    # the first round sorts every name, and its temporaries set an import's peak memory.
    while tied.size:
        names = ranked[tied]
        word = _word(words, starts, lengths, index, names)
        limit = 8 * index + 9  # a clipped length of 8 * index + 9: the name goes on past this word
        clipped = np.minimum(lengths[names], limit).astype(np.uint8 if limit < 256 else np.int32)
        by = np.lexsort((clipped, word) if group is None else (clipped, word, group))
        ranked[tied] = names[by]
        del names
        word, clipped = word[by], clipped[by]
        if group is not None:
            group = group[by]
        del by
        begins = np.ones(tied.size, dtype=bool)
        begins[1:] = (word[1:] != word[:-1]) | (clipped[1:] != clipped[:-1])
        if group is not None:
            begins[1:] |= group[1:] != group[:-1]
        del word, group
        alone = begins & np.append(begins[1:], True)  # a group of one: its order is settled
        still = np.logical_not(alone) & (clipped > 8 * index + 8)
        del alone, clipped
        head = np.where(begins, np.arange(tied.size, dtype=np.int32), np.int32(0))
        np.maximum.accumulate(head, out=head)  # each position's group's first position
        del begins
        tied, group = tied[still], tied[head[still]]
        del head, still
        index += 1
    return ranked


def _byte_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The index of every byte of the names at ``starts``, name after name."""
    total = int(lengths.sum())
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(total)


def _room(array: np.ndarray, size: int) -> np.ndarray:
    """``array``, or a copy at least twice as long, so that it holds ``size`` entries."""
    if size <= array.size:
        return array
    grown = np.zeros(max(size, 2 * array.size), dtype=array.dtype)
    grown[: array.size] = array
    return grown
