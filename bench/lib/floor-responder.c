/*
 * The authorization benchmark's floor: a Check server that does no work. It speaks just enough
 * cleartext HTTP/2 (RFC 9113) for Envoy's ext_authz gRPC client and answers every request stream
 * with the same unary gRPC response (HEADERS, one DATA frame holding the CheckResponse read from a
 * file, trailers `grpc-status: 0`), in one write per read. Native code with a thread per
 * connection, so what Envoy adds for ext_authz through it is the hop itself on this host: Envoy's
 * own ext_authz work, the loopback round trip and the scheduling, with no Node.js and no decision.
 *
 *   floor-responder <check-response-file>   listens on 127.0.0.1, an ephemeral port, printed as a line
 *
 * Benchmark use only: no HPACK decoding (request headers are skipped), no flow control beyond
 * opening the windows wide, no limits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { FRAME_DATA = 0, FRAME_HEADERS = 1, FRAME_SETTINGS = 4, FRAME_PING = 6, FRAME_GOAWAY = 7, FRAME_WINDOW_UPDATE = 8 };
enum { FLAG_END_STREAM = 1, FLAG_ACK = 1, FLAG_END_HEADERS = 4 };
enum { PREFACE_BYTES = 24, FRAME_HEADER_BYTES = 9, READ_BUFFER = 1 << 20, OUT_BUFFER = 1 << 20 };

static unsigned char message[16384];
static int message_bytes;
/* `:status 200` (static index 8), `content-type: application/grpc` (name from static index 31). */
static const unsigned char response_headers[] = {0x88, 0x0f, 0x10, 16, 'a', 'p', 'p', 'l', 'i', 'c',
                                                 'a', 't', 'i', 'o', 'n', '/', 'g', 'r', 'p', 'c'};
/* `grpc-status: 0`, a literal without indexing with a literal name. */
static const unsigned char ok_trailers[] = {0x00, 11, 'g', 'r', 'p', 'c', '-', 's', 't', 'a', 't', 'u', 's', 1, '0'};

static int frame_header(unsigned char *at, uint32_t length, int type, int flags, uint32_t stream) {
  at[0] = length >> 16; at[1] = length >> 8; at[2] = length;
  at[3] = type; at[4] = flags;
  at[5] = stream >> 24; at[6] = stream >> 16; at[7] = stream >> 8; at[8] = stream;
  return FRAME_HEADER_BYTES;
}

static int put_u32(unsigned char *at, uint32_t value) {
  at[0] = value >> 24; at[1] = value >> 16; at[2] = value >> 8; at[3] = value;
  return 4;
}

static int write_all(int fd, const unsigned char *bytes, int length) {
  while (length > 0) {
    ssize_t n = write(fd, bytes, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    bytes += n; length -= n;
  }
  return 0;
}

/* The whole unary response for `stream`: HEADERS, DATA (5-octet gRPC prefix + message), trailers. */
static int answer(unsigned char *out, uint32_t stream) {
  int at = frame_header(out, sizeof response_headers, FRAME_HEADERS, FLAG_END_HEADERS, stream);
  memcpy(out + at, response_headers, sizeof response_headers); at += sizeof response_headers;
  at += frame_header(out + at, message_bytes + 5, FRAME_DATA, 0, stream);
  out[at++] = 0; at += put_u32(out + at, message_bytes);
  memcpy(out + at, message, message_bytes); at += message_bytes;
  at += frame_header(out + at, sizeof ok_trailers, FRAME_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, stream);
  memcpy(out + at, ok_trailers, sizeof ok_trailers); at += sizeof ok_trailers;
  return at;
}

static void *serve(void *argument) {
  int fd = (int)(intptr_t)argument, one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  unsigned char *in = malloc(READ_BUFFER), *out = malloc(OUT_BUFFER);
  /* SETTINGS_INITIAL_WINDOW_SIZE 2^30, then the connection window opened to 2^31 - 1. */
  int o = frame_header(out, 6, FRAME_SETTINGS, 0, 0);
  out[o++] = 0; out[o++] = 4; o += put_u32(out + o, 1u << 30);
  o += frame_header(out + o, 4, FRAME_WINDOW_UPDATE, 0, 0);
  o += put_u32(out + o, 0x7fffffffu - 65535u);
  int have = 0, preface = PREFACE_BYTES, open = write_all(fd, out, o) == 0;
  while (open) {
    ssize_t n = read(fd, in + have, READ_BUFFER - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += n;
    int at = 0;
    o = 0;
    if (preface > 0) { int skip = have < preface ? have : preface; at += skip; preface -= skip; }
    while (have - at >= FRAME_HEADER_BYTES) {
      uint32_t length = (in[at] << 16) | (in[at + 1] << 8) | in[at + 2];
      int type = in[at + 3], flags = in[at + 4];
      uint32_t stream = ((in[at + 5] & 0x7f) << 24) | (in[at + 6] << 16) | (in[at + 7] << 8) | in[at + 8];
      if (length > READ_BUFFER - FRAME_HEADER_BYTES) { open = 0; break; }
      if ((uint32_t)(have - at) < FRAME_HEADER_BYTES + length) break;
      if (OUT_BUFFER - o < 4096 + message_bytes) { if (write_all(fd, out, o) != 0) open = 0; o = 0; }
      if (type == FRAME_SETTINGS && !(flags & FLAG_ACK)) {
        o += frame_header(out + o, 0, FRAME_SETTINGS, FLAG_ACK, 0);
      } else if (type == FRAME_PING && !(flags & FLAG_ACK) && length == 8) {
        o += frame_header(out + o, 8, FRAME_PING, FLAG_ACK, 0);
        memcpy(out + o, in + at + FRAME_HEADER_BYTES, 8); o += 8;
      } else if (type == FRAME_GOAWAY) {
        open = 0;
      } else if ((type == FRAME_DATA || type == FRAME_HEADERS) && (flags & FLAG_END_STREAM) && stream != 0) {
        o += answer(out + o, stream);
      }
      at += FRAME_HEADER_BYTES + length;
    }
    memmove(in, in + at, have - at);
    have -= at;
    if (o > 0 && write_all(fd, out, o) != 0) break;
  }
  close(fd);
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: floor-responder <check-response-file>\n"); return 2; }
  FILE *file = fopen(argv[1], "rb");
  if (file == NULL) { perror(argv[1]); return 2; }
  message_bytes = (int)fread(message, 1, sizeof message, file);
  int longer = fgetc(file) != EOF;
  fclose(file);
  if (longer) { fprintf(stderr, "floor-responder: %s is over %zu octets\n", argv[1], sizeof message); return 2; }
  int server = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 || listen(server, 64) != 0 ||
      getsockname(server, (struct sockaddr *)&address, &size) != 0) {
    perror("floor-responder: listen");
    return 1;
  }
  printf("%d\n", ntohs(address.sin_port));
  fflush(stdout);
  for (;;) {
    int client = accept(server, NULL, NULL);
    if (client < 0) continue;
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve, (void *)(intptr_t)client) != 0) { close(client); continue; }
    pthread_detach(thread);
  }
}
