/*
 * The name a program written against the Mooncake Store's C ABI includes. In the kvtier project's test
 * double this is only a forward to our own declarations (mooncake_fake.h), so that such a program (the
 * Mooncake baseline of `kvtier bench tier`) compiles against the double's install exactly as against a real
 * one. Not Mooncake's header.
 */
#ifndef KVTIER_MOONCAKE_FAKE_STORE_C_H
#define KVTIER_MOONCAKE_FAKE_STORE_C_H

#include "mooncake_fake.h"

#endif
