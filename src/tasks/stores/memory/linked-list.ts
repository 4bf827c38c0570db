/**
 * The memory store's doubly linked lists: the expiry and eviction queues, with O(1) append,
 * unlink and move to the end, and nodes that their values own for life (no allocation on a move).
 *
 * @example
 * ```ts
 * const queue = new LinkedList<string>();
 * const node = new ListNode('task-1');
 * queue.append(node);
 * queue.first(); // 'task-1'
 * ```
 */

/**
 * A list node, owned by its value for life and linked into at most one list at a time.
 *
 * @example
 * ```ts
 * const node = new ListNode(entry);
 * ```
 */
export class ListNode<T> {
  readonly value: T;
  prev: ListNode<T> | undefined = undefined;
  next: ListNode<T> | undefined = undefined;
  /** Whether it is in a list: unlinking a node twice is a no-op rather than a corrupted list. */
  linked = false;

  constructor(value: T) {
    this.value = value;
  }
}

/**
 * Insertion-ordered, with O(1) append, unlink, move to the end and first: the queues for
 * expiry and eviction. The caller allocates the nodes, so that moving costs no allocation.
 *
 * @example
 * ```ts
 * touched.moveToEnd(entry.touchedNode);
 * const oldest = touched.first();
 * ```
 */
export class LinkedList<T> {
  private head: ListNode<T> | undefined;
  private tail: ListNode<T> | undefined;

  first(): T | undefined {
    return this.head?.value;
  }

  /** The values first to last; do not unlink while iterating. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let node = this.head; node !== undefined; node = node.next) yield node.value;
  }

  /** Links a node that is in no list at the end. */
  append(node: ListNode<T>): void {
    if (node.linked) throw new Error('LinkedList: node is already linked');
    node.prev = this.tail;
    node.next = undefined;
    node.linked = true;
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  /** Unlinks a node of this list; does nothing if it is not linked. */
  unlink(node: ListNode<T>): void {
    if (!node.linked) return;
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = undefined;
    node.next = undefined;
    node.linked = false;
  }

  /** Makes a node of this list its last one. */
  moveToEnd(node: ListNode<T>): void {
    if (node === this.tail) return;
    this.unlink(node);
    this.append(node);
  }
}
