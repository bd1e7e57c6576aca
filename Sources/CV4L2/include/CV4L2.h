#ifndef CV4L2_H
#define CV4L2_H
#include <linux/videodev2.h>
#include <stdint.h>

/// ioctl(2) without the variadic argument, which Swift cannot pass.
int cv4l2_ioctl(int fd, unsigned long request, void *argument);

// The VIDIOC_* request numbers are `_IOR`/`_IOWR` macro expressions, which Swift cannot import:
// each is defined once in shim.c from the kernel header, so the numbers always match the structs.
extern const unsigned long CV4L2_VIDIOC_QUERYCAP;
extern const unsigned long CV4L2_VIDIOC_ENUM_FMT;
extern const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long CV4L2_VIDIOC_G_FMT;
extern const unsigned long CV4L2_VIDIOC_S_FMT;
extern const unsigned long CV4L2_VIDIOC_REQBUFS;
extern const unsigned long CV4L2_VIDIOC_QUERYBUF;
extern const unsigned long CV4L2_VIDIOC_QBUF;
extern const unsigned long CV4L2_VIDIOC_DQBUF;
extern const unsigned long CV4L2_VIDIOC_STREAMON;
extern const unsigned long CV4L2_VIDIOC_STREAMOFF;

// The pixel formats are `v4l2_fourcc(...)` macro calls, which Swift cannot import either.
extern const uint32_t CV4L2_PIX_FMT_YUYV;
extern const uint32_t CV4L2_PIX_FMT_MJPEG;
extern const uint32_t CV4L2_PIX_FMT_JPEG;

/// `v4l2_fourcc(a, b, c, d)`: four characters packed little-endian into a pixel format code.
static inline uint32_t cv4l2_fourcc(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return v4l2_fourcc(a, b, c, d);
}

#endif
