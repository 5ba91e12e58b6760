#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct io_uring_params p; memset(&p, 0, sizeof p);
    int ring = syscall(__NR_io_uring_setup, 1, &p);
    if (ring < 0) { perror("io_uring_setup"); return 1; }
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    size_t sz = sqsz > cqsz ? sqsz : cqsz;
    char *sq = mmap(0, sz, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ|PROT_WRITE, MAP_SHARED|MAP_POPULATE, ring, IORING_OFF_SQES);
    if (sq == MAP_FAILED || sqes == MAP_FAILED) { perror("mmap"); return 1; }
    char *cq = sq;
    memset(sqes, 0, sizeof *sqes);
    sqes[0].opcode = IORING_OP_SOCKET; sqes[0].fd = AF_UNIX; sqes[0].off = SOCK_STREAM;
    unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned *array = (unsigned *)(sq + p.sq_off.array);
    array[*tail & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
    __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, 0, 0) < 0) { perror("enter"); return 1; }
    unsigned *chead = (unsigned *)(cq + p.cq_off.head);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    int fd = cqes[*chead & *(unsigned *)(cq + p.cq_off.ring_mask)].res;
    if (fd < 0) { fprintf(stderr, "socket op: %s\n", strerror(-fd)); return 1; }
    struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX;
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
    write(fd, "leaked", 6);
    puts("sent");
    return 0;
}
