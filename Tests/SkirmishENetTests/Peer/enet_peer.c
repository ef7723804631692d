/*
 * A libenet 1.3 peer for the ENet plug-in's loopback tests, built by the tests with `gcc enet_peer.c -lenet`.
 *
 * Server mode (default): binds 127.0.0.1 on a free port and prints `port N`. Every packet it receives is echoed to
 * its sender on the same channel with the same flags, unless its first byte is 'R': then it is relayed to every
 * other connected peer instead. A reliable packet whose first byte is 'Q' carries a big-endian u32 sequence number
 * at offset 1: each peer's must count 0, 1, 2… from its connect, and the server counts those that do (`inOrder`)
 * and those that do not (`outOfOrder`: a gap, a duplicate or a reordering). Commands on stdin, one per line:
 *   broadcast SECONDS   30 Hz unreliable state on channel 1, and a reliable event every 10th tick on channel 0;
 *                       prints `broadcast done` at the end
 *   send CH MODE SIZE N N packets of SIZE bytes to every peer; MODE r reliable, u unreliable, s unsequenced,
 *                       f unreliable with ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT
 *   kick DATA           enet_peer_disconnect on every peer, with DATA
 *   stats               print the counters as one JSON line
 *   quit                print the counters and exit
 * It prints `connect ID DATA` and `disconnect ID DATA` as peers come and go. Every peer gets a throttle
 * configuration with deceleration 0, so neither side's packet throttle drops unreliable packets and the counts of
 * both sides can be compared exactly.
 *
 * Capture mode (`--capture PORT`): a libenet client sends its connect request (2 channels, data 0x01020304) to
 * 127.0.0.1:PORT and exits: the tests compare its bytes with the plug-in's.
 *
 * Every loop is bounded: the server exits after --seconds (default 60) or when stdin closes (with --detached it
 * ignores stdin, for a run by hand: `enet-peer --detached --seconds 300 &`). --peers N (default 32) sets how many
 * peers it takes, --channels N (default 4) how many channels, --checksum turns on libenet's CRC-32.
 */
#include <enet/enet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MODES = 3, CHANNELS = 256 };
static const char *modeNames[MODES] = {"reliable", "unreliable", "unsequenced"};
static unsigned long receivedPackets[MODES][CHANNELS], receivedBytes[MODES][CHANNELS];
static unsigned long sentPackets[MODES][CHANNELS];
static unsigned long connects, disconnects;
/* The 'Q' stream: the number each peer's next reliable 'Q' packet must carry, by incoming peer id. */
enum { MAX_PEERS = 4096 };
static enet_uint32 nextSequence[MAX_PEERS];
static unsigned long inOrder, outOfOrder;

static int modeOf(enet_uint32 flags) {
    if (flags & ENET_PACKET_FLAG_RELIABLE) return 0;
    if (flags & ENET_PACKET_FLAG_UNSEQUENCED) return 2;
    return 1;
}

static void printCounts(const char *name, unsigned long counts[MODES][CHANNELS]) {
    int first = 1;
    printf("\"%s\":{", name);
    for (int mode = 0; mode < MODES; ++mode)
        for (int channel = 0; channel < CHANNELS; ++channel)
            if (counts[mode][channel]) {
                printf("%s\"%s/ch%d\":%lu", first ? "" : ",", modeNames[mode], channel, counts[mode][channel]);
                first = 0;
            }
    printf("}");
}

static void printStats(void) {
    printf("stats {");
    printCounts("received", receivedPackets);
    printf(",");
    printCounts("receivedBytes", receivedBytes);
    printf(",");
    printCounts("sent", sentPackets);
    printf(",\"connects\":%lu,\"disconnects\":%lu,\"inOrder\":%lu,\"outOfOrder\":%lu}\n", connects, disconnects,
        inOrder, outOfOrder);
    fflush(stdout);
}

static void sendTo(ENetPeer *peer, enet_uint8 channel, const void *data, size_t length, enet_uint32 flags) {
    ENetPacket *packet = enet_packet_create(data, length, flags);
    if (packet == NULL) return;
    if (enet_peer_send(peer, channel, packet) == 0)
        sentPackets[modeOf(flags)][channel]++;
    else
        enet_packet_destroy(packet);
}

static void sendToAll(ENetHost *host, enet_uint8 channel, const void *data, size_t length, enet_uint32 flags) {
    for (size_t index = 0; index < host->peerCount; ++index)
        if (host->peers[index].state == ENET_PEER_STATE_CONNECTED)
            sendTo(&host->peers[index], channel, data, length, flags);
}

static int capture(int port) {
    ENetHost *client = enet_host_create(NULL, 1, 2, 0, 0);
    if (client == NULL) return 2;
    ENetAddress address = {0};
    enet_address_set_host(&address, "127.0.0.1");
    address.port = (enet_uint16) port;
    if (enet_host_connect(client, &address, 2, 0x01020304) == NULL) return 3;
    enet_host_flush(client);
    enet_host_destroy(client);
    return 0;
}

int main(int argc, char **argv) {
    int checksum = 0, channels = 4, seconds = 60, peers = 32, detached = 0;
    for (int index = 1; index < argc; ++index) {
        if (strcmp(argv[index], "--checksum") == 0) checksum = 1;
        else if (strcmp(argv[index], "--channels") == 0 && index + 1 < argc) channels = atoi(argv[++index]);
        else if (strcmp(argv[index], "--seconds") == 0 && index + 1 < argc) seconds = atoi(argv[++index]);
        else if (strcmp(argv[index], "--peers") == 0 && index + 1 < argc) peers = atoi(argv[++index]);
        else if (strcmp(argv[index], "--detached") == 0) detached = 1;
        else if (strcmp(argv[index], "--capture") == 0 && index + 1 < argc) {
            if (enet_initialize() != 0) return 1;
            int status = capture(atoi(argv[++index]));
            enet_deinitialize();
            return status;
        }
    }
    if (enet_initialize() != 0) return 1;
    ENetAddress address = {0};
    enet_address_set_host(&address, "127.0.0.1");
    address.port = ENET_PORT_ANY;
    if (peers < 1 || peers > MAX_PEERS) return 4;
    ENetHost *host = enet_host_create(&address, (size_t) peers, (size_t) channels, 0, 0);
    if (host == NULL) return 2;
    if (checksum) host->checksum = enet_crc32;
    printf("port %u\n", host->address.port);
    fflush(stdout);

    enet_uint32 start = enet_time_get(), broadcastUntil = 0, nextTick = 0, tick = 0, event = 0;
    char line[256];
    size_t lineLength = 0;
    int running = 1, broadcasting = 0;
    while (running && enet_time_get() - start < (enet_uint32) seconds * 1000) {
        ENetEvent received;
        for (int events = 0; events < 10000 && enet_host_service(host, &received, 1) > 0; ++events) {
            switch (received.type) {
            case ENET_EVENT_TYPE_CONNECT:
                connects++;
                nextSequence[received.peer->incomingPeerID] = 0;
                enet_peer_throttle_configure(received.peer, ENET_PEER_PACKET_THROTTLE_INTERVAL, 2, 0);
                printf("connect %u %u\n", received.peer->incomingPeerID, received.data);
                fflush(stdout);
                break;
            case ENET_EVENT_TYPE_DISCONNECT:
                disconnects++;
                printf("disconnect %u %u\n", received.peer->incomingPeerID, received.data);
                fflush(stdout);
                break;
            case ENET_EVENT_TYPE_RECEIVE: {
                ENetPacket *packet = received.packet;
                int mode = modeOf(packet->flags);
                enet_uint32 flags = packet->flags &
                    (ENET_PACKET_FLAG_RELIABLE | ENET_PACKET_FLAG_UNSEQUENCED | ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT);
                receivedPackets[mode][received.channelID]++;
                receivedBytes[mode][received.channelID] += packet->dataLength;
                if (mode == 0 && packet->dataLength >= 5 && packet->data[0] == 'Q') {
                    const enet_uint8 *bytes = packet->data + 1;
                    enet_uint32 sequence = (enet_uint32) bytes[0] << 24 | (enet_uint32) bytes[1] << 16
                        | (enet_uint32) bytes[2] << 8 | bytes[3];
                    enet_uint32 *next = &nextSequence[received.peer->incomingPeerID];
                    if (sequence == *next) inOrder++;
                    else outOfOrder++;
                    *next = sequence + 1;
                }
                if (packet->dataLength > 0 && packet->data[0] == 'R') {
                    for (size_t index = 0; index < host->peerCount; ++index) {
                        ENetPeer *peer = &host->peers[index];
                        if (peer != received.peer && peer->state == ENET_PEER_STATE_CONNECTED)
                            sendTo(peer, received.channelID, packet->data, packet->dataLength, flags);
                    }
                } else {
                    sendTo(received.peer, received.channelID, packet->data, packet->dataLength, flags);
                }
                enet_packet_destroy(packet);
                break;
            }
            default:
                break;
            }
        }
        enet_uint32 now = enet_time_get();
        if (broadcasting && now >= broadcastUntil) {
            broadcasting = 0;
            printf("broadcast done\n");
            fflush(stdout);
        }
        if (broadcasting && now >= nextTick) {
            unsigned char state[32] = {'S'};
            nextTick = now + 33;
            ++tick;
            memcpy(state + 1, &tick, sizeof tick);
            sendToAll(host, 1, state, sizeof state, 0);
            if (tick % 10 == 0) {
                unsigned char update[8] = {'V'};
                ++event;
                memcpy(update + 1, &event, sizeof event);
                sendToAll(host, 0, update, sizeof update, ENET_PACKET_FLAG_RELIABLE);
            }
        }
        struct pollfd input = {.fd = 0, .events = POLLIN};
        while (running && !detached && poll(&input, 1, 0) > 0) {
            char byte;
            ssize_t count = read(0, &byte, 1);
            if (count <= 0) {
                running = 0;
                break;
            }
            if (byte != '\n') {
                if (lineLength + 1 < sizeof line) line[lineLength++] = byte;
                continue;
            }
            line[lineLength] = 0;
            lineLength = 0;
            unsigned value = 0, channel = 0, size = 0, packets = 0;
            char mode = 0;
            if (sscanf(line, "broadcast %u", &value) == 1) {
                broadcastUntil = enet_time_get() + value * 1000;
                broadcasting = 1;
            } else if (sscanf(line, "send %u %c %u %u", &channel, &mode, &size, &packets) == 4 && size <= 1 << 20) {
                enet_uint32 flags = mode == 'r' ? ENET_PACKET_FLAG_RELIABLE
                    : mode == 's'               ? ENET_PACKET_FLAG_UNSEQUENCED
                    : mode == 'f'               ? ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT
                                                : 0;
                unsigned char *data = malloc(size ? size : 1);
                for (unsigned number = 0; number < packets && data != NULL; ++number) {
                    for (unsigned index = 0; index < size; ++index) data[index] = (unsigned char) (index * 7 + number);
                    if (size > 0) data[0] = 'P';
                    sendToAll(host, (enet_uint8) channel, data, size, flags);
                }
                free(data);
            } else if (sscanf(line, "kick %u", &value) == 1) {
                for (size_t index = 0; index < host->peerCount; ++index)
                    if (host->peers[index].state == ENET_PEER_STATE_CONNECTED)
                        enet_peer_disconnect(&host->peers[index], value);
            } else if (strcmp(line, "stats") == 0) {
                printStats();
            } else if (strcmp(line, "quit") == 0) {
                running = 0;
            }
        }
    }
    printStats();
    enet_host_flush(host);
    enet_host_destroy(host);
    enet_deinitialize();
    return 0;
}
