// test_fifo.h - a FIFO fed by a child process, for the tests of the readers that must accept FIFOs.
#ifndef PHYS_TEST_FIFO_H
#define PHYS_TEST_FIFO_H

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

// make a FIFO at path (replacing any file there) and fork a child that writes the n bytes of data into it and
// exits (it gives up after 10 s if nobody opens the FIFO); returns the child's pid (waitpid it), -1 on failure
static inline pid_t test_fifo_feed(const char* path, const void* data, size_t n) {
  unlink(path);
  if (mkfifo(path, 0600) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    FILE* f = fopen(path, "w");
    if (f) fwrite(data, 1, n, f), fclose(f);
    _exit(0);
  }
  return pid;
}

#endif  // PHYS_TEST_FIFO_H
